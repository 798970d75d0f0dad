"""What a human is shown about a server's question: where a URL really goes, and which form fields ask for secrets.

Servers are untrusted. A URL is described the way a browser will read it (the WHATWG URL standard, parsed by
``ada-url``, not RFC 3986: ``https://evil.example\\@bank.example/`` goes to ``evil.example`` in every browser, while
``urllib`` says ``bank.example``), and only ``http``/``https`` URLs with a host are ever offered as links (``javascript:``,
``data:``, ``file:`` are flagged). Form fields are inspected by name, title and description, split into words,
so a UI can mask secrets and warn that the server asks for them by form (the MCP spec says servers must not).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ada_url

__all__ = ["UrlInspection", "inspect_url", "looks_secret", "sensitive_fields", "url_host"]

# --------------------------------------------------------------------------------------------- URLs

_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*:")
_LINK_SCHEMES = frozenset({"http", "https"})
_SPECIAL_SCHEMES = frozenset({"ftp", "file", "http", "https", "ws", "wss"})


@dataclass(frozen=True)
class UrlInspection:
    """A URL as a browser reads it: its scheme, its host (``""`` if none) and whether it may be offered as a link."""

    scheme: str
    host: str
    """The host with an explicit non-default port (``localhost:8080``), ASCII form, IPv4 numbers normalized."""
    openable: bool
    """Only an ``http``/``https`` URL with a valid host may be shown as a link."""
    warning: str | None
    """Why the URL must not be offered as a link (or what is suspicious about it), for the human."""


def inspect_url(url: str) -> UrlInspection:
    """Read ``url`` the way a browser does, and say what a human should know before opening it.

    Parsing and host serialization are the WHATWG URL standard's, by ``ada-url`` (the parser Node.js uses): user
    info ends at the *last* ``@``, ``\\`` ends the authority like ``/`` for special schemes, IPv4 numbers in any
    form browsers accept are normalized (``0x7f000001`` is ``127.0.0.1``), IDNA is UTS #46 non-transitional
    (``faß.de`` is ``xn--fa-hia.de``), IPv6 is compressed, a default port is dropped and another kept, and a URL
    a browser refuses has no host. On top of that: only ``http``/``https`` URLs with a host are openable, and user
    info, numeric hosts and internationalized (possibly look-alike) host names are flagged.
    """
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        match = _SCHEME_RE.match(url.strip())
        if match is None:
            return UrlInspection("", "", False, "not an absolute URL (no scheme): do not open it")
        scheme = match.group(0)[:-1].lower()
        return UrlInspection(
            scheme, "", False, "the URL is not valid (its host or port): a browser would refuse it"
        )
    scheme = parsed.protocol[:-1]
    host = parsed.host
    if "xn--" in parsed.hostname.split("."):
        # An empty Punycode label: browsers (UTS #46 since 15.1) refuse it; the bundled ada still accepts it.
        return UrlInspection(
            scheme, "", False, "the URL is not valid (its host or port): a browser would refuse it"
        )
    if scheme not in _SPECIAL_SCHEMES and not host:  # an opaque URL (javascript:, data:, mailto:, ...)
        return UrlInspection(
            scheme,
            "",
            False,
            f"a {scheme}: URL, not a web page: it is never offered as a link; do not open it",
        )
    if scheme not in _LINK_SCHEMES:
        return UrlInspection(
            scheme, host, False, f"a {scheme}: URL, not a web page: it is never offered as a link"
        )
    if not host:
        return UrlInspection(scheme, "", False, "the URL has no host")
    return UrlInspection(scheme, host, True, _host_warning(parsed))


def _host_warning(parsed: ada_url.URL) -> str | None:
    notes = []
    if parsed.username or parsed.password:
        notes.append("the URL carries user info before '@' (it does not change where it goes)")
    hostname = parsed.hostname
    if hostname.startswith("[") or (hostname.replace(".", "").isdigit() and hostname.count(".") == 3):
        notes.append(f"the host is a bare IP address ({hostname}), not a name")
    elif any(label.startswith("xn--") for label in hostname.split(".")):
        shown = ada_url.idna.decode(hostname)
        notes.append(
            f"the host is an internationalized name ({shown}, {hostname}): check for look-alike letters"
        )
    return "; ".join(notes) or None


def url_host(url: str) -> str:
    """The host a browser would go to for ``url`` (``""`` when it has none or is not valid); see :func:`inspect_url`."""
    return inspect_url(url).host


# --------------------------------------------------------------------------------------------- secrets

_RUN_RE = re.compile(r"[^\W_]+")
"""A run of letters and digits in any script (``_``, ``-``, spaces and punctuation separate words)."""

_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "passcode",
        "pin",
        "otp",
        "totp",
        "hotp",
        "mfa",
        "token",
        "bearer",
        "jwt",
        "authorization",
        "secret",
        "credential",
        "credentials",
        "apikey",
        "accesskey",
        "privatekey",
        "mnemonic",
        "creditcard",
        "cardnumber",
        "cvv",
        "cvc",
        "ssn",
        "iban",
        # Passwords, PINs and one-time codes in other languages (whole words, as for English).
        "passwort",  # de
        "kennwort",
        "geheimzahl",
        "einmalcode",
        "einmalpasswort",
        "bestätigungscode",
        "contraseña",  # es
        "contrasena",
        "senha",  # pt
        "пароль",  # ru
        "пин",
        "пинкод",
        "wachtwoord",  # nl
        "hasło",  # pl
        "haslo",
        "şifre",  # tr
        "lösenord",  # sv
        "adgangskode",  # da
        "passord",  # no
        "salasana",  # fi
        "heslo",  # cs
        "jelszó",  # hu
    }
)
_SECRET_PHRASES = frozenset(
    {
        ("pass", "word"),
        ("pass", "phrase"),
        ("pass", "code"),
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("credit", "card"),
        ("card", "number"),
        ("cc", "number"),
        ("cc", "num"),
        ("security", "code"),
        ("social", "security"),
        ("verification", "code"),
        ("auth", "code"),
        ("recovery", "code"),
        ("recovery", "codes"),
        ("recovery", "key"),
        ("backup", "codes"),
        ("seed", "phrase"),
        ("session", "cookie"),
        ("2", "fa"),
        ("two", "fa"),
        ("two", "factor"),
        ("mot", "de", "passe"),  # fr
        ("code", "de", "vérification"),
        ("code", "de", "verification"),
        ("código", "de", "verificación"),  # es
        ("codigo", "de", "verificacion"),
        ("código", "de", "acceso"),
        ("clave", "de", "acceso"),
        ("código", "de", "verificação"),  # pt
        ("codigo", "de", "verificacao"),
        ("código", "de", "acesso"),
        ("код", "подтверждения"),  # ru
        ("пин", "код"),
        ("одноразовый", "код"),
    }
)
_LONGEST_PHRASE = max(len(phrase) for phrase in _SECRET_PHRASES)
_UNSPACED_SECRETS = (
    "密码",  # zh: password
    "密碼",
    "口令",
    "验证码",  # zh: verification code
    "驗證碼",
    "动态码",
    "パスワード",  # ja: password
    "暗証番号",  # ja: PIN
    "認証コード",  # ja: verification code
    "確認コード",
    "ワンタイム",  # ja: one-time (password, code)
    "비밀번호",  # ko: password
    "인증번호",  # ko: verification number
    "인증코드",
)
"""Secret words of scripts written without spaces between words: found inside a name or text, not as words."""
_UNSPACED_NOT_SECRET = ("密码学", "密碼學")
"""Words that contain one of those without naming a secret (cryptography)."""
_NOT_IN_PROSE = frozenset({"pass", "pin"})
"""Words that are secrets as field names but everyday words in a description ("we pass this on")."""
_NOT_SECRET_AFTER = frozenset(
    {
        "count",
        "limit",
        "limits",
        "budget",
        "usage",
        "type",
        "length",
        "size",
        "policy",
        "hint",
        "expiry",
        "expires",
        "expiration",
        "name",
        "id",
        "strength",
        "hinweis",  # de
        "länge",
        "longitud",  # es
        "pista",
        "longueur",  # fr
        "indice",
        "dica",  # pt
        "comprimento",
        "подсказка",  # ru
        "длина",
    }
)
"""A secret word followed by one of these describes a secret without being one (``token_count``)."""


def _words(text: str) -> list[str]:
    """Split a name or text into lower-case words, in any script: ``apiKey`` / ``API_KEY`` / ``"API key"`` ->
    api, key; ``nuevaContraseña`` -> nueva, contraseña; ``2fa`` -> 2, fa."""
    words: list[str] = []
    for run in _RUN_RE.findall(text):
        start = 0
        for i in range(1, len(run)):
            before, here, after = run[i - 1], run[i], run[i + 1 : i + 2]
            if (
                before.isdigit() != here.isdigit()
                or (before.islower() and here.isupper())
                or (before.isupper() and here.isupper() and after.islower())  # "FACode" -> FA, Code
            ):
                words.append(run[start:i])
                start = i
        words.append(run[start:])
    return [w.lower() for w in words]


def looks_secret(text: str, *, prose: bool = False) -> bool:
    """Whether a field name, title (or, with ``prose``, a description) names a secret, word by word."""
    words = _words(text)
    for i, word in enumerate(words):
        span = 0
        if word in _SECRET_WORDS and not (prose and word in _NOT_IN_PROSE):
            span = 1
        else:
            for length in range(2, _LONGEST_PHRASE + 1):
                if tuple(words[i : i + length]) in _SECRET_PHRASES:
                    span = length
                    break
        if span and (i + span >= len(words) or words[i + span] not in _NOT_SECRET_AFTER):
            return True
    unspaced = text
    for harmless in _UNSPACED_NOT_SECRET:
        unspaced = unspaced.replace(harmless, "")
    return any(secret in unspaced for secret in _UNSPACED_SECRETS)


def sensitive_fields(requested_schema: dict[str, Any]) -> list[str]:
    """Names of the form fields that look secret, in schema order, so a UI can mask them (and warn).

    A field is sensitive if its schema says ``format: "password"`` or ``writeOnly: true``, or if its name, title
    or description, split into words (on ``_``, ``-``, spaces and camelCase), names a secret: password, pass,
    passphrase, passcode, PIN, OTP/TOTP/MFA/2FA, verification or recovery codes, token, bearer, JWT,
    authorization, secret, credential(s), API/access/private key, seed phrase, mnemonic, session cookie, credit
    card / card number / CC number, security code, CVV/CVC, SSN, IBAN; and the words for password, PIN and
    one-time or verification code in German, Spanish, French, Portuguese, Russian, Dutch, Polish, Turkish, the
    Nordic languages, Czech and Hungarian, and (found inside text) Chinese, Japanese and Korean. Whole words only: ``username``,
    ``description``, ``pinned`` and ``tokenizer`` are not sensitive; nor is a word that only describes a secret
    (``token_count``, ``password_hint``, ``api_key_name``).
    """
    properties = requested_schema.get("properties") if isinstance(requested_schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return []
    found: list[str] = []
    for name, prop in properties.items():
        if not isinstance(name, str):
            continue
        prop = prop if isinstance(prop, Mapping) else {}
        title, description = prop.get("title"), prop.get("description")
        if (
            prop.get("format") == "password"
            or prop.get("writeOnly") is True
            or looks_secret(name)
            or (isinstance(title, str) and looks_secret(title))
            or (isinstance(description, str) and looks_secret(description, prose=True))
        ):
            found.append(name)
    return found
