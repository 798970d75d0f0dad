"""What a human is shown about a server's question: where a URL really goes, and which form fields ask for secrets.

Servers are untrusted. A URL is described the way a browser will read it (the WHATWG URL standard, not RFC 3986:
``https://evil.example\\@bank.example/`` goes to ``evil.example`` in every browser, while ``urllib`` says
``bank.example``), and only ``http``/``https`` URLs with a host are ever offered as links (``javascript:``,
``data:``, ``file:`` are flagged). Form fields are inspected by name, title and description, split into words,
so a UI can mask secrets and warn that the server asks for them by form (the MCP spec says servers must not).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

__all__ = ["UrlInspection", "inspect_url", "looks_secret", "sensitive_fields", "url_host"]

# --------------------------------------------------------------------------------------------- URLs

_SPECIAL_PORTS = {"ftp": 21, "file": None, "http": 80, "https": 443, "ws": 80, "wss": 443}
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*:")
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|%")
_LINK_SCHEMES = frozenset({"http", "https"})
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))


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


def _parse_ipv4_number(part: str) -> int | None:
    if not part:
        return None
    base = 10
    if part[:2] in ("0x", "0X"):
        part, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, base = part[1:], 8
    if not part:
        return 0
    try:
        return int(part, base) if re.fullmatch(r"[0-9a-fA-F]+", part) else None
    except ValueError:
        return None


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    return bool(re.fullmatch(r"[0-9]+", last)) or (
        _parse_ipv4_number(last) is not None and last[:2] in ("0x", "0X")
    )


def _ipv4(host: str) -> str | None:
    """The WHATWG IPv4 parser: ``0x7f000001``, ``0177.0.0.1``, ``127.1`` all mean ``127.0.0.1``."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 4:
        return None
    numbers = [_parse_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for i, n in enumerate(values[:-1]):
        address += n * 256 ** (3 - i)
    return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))


def _host(raw: str) -> str | None:
    """A WHATWG host from the authority's host part, ASCII-serialized; ``None`` if a browser would refuse it."""
    if raw.startswith("["):
        if not raw.endswith("]") or not re.fullmatch(r"\[[0-9A-Fa-f:.]+\]", raw):
            return None
        return raw.lower()
    decoded = unquote(raw)
    try:
        ascii_host = decoded.encode("idna").decode("ascii").lower() if decoded else ""
    except UnicodeError:
        return None
    if not ascii_host or any(c in _FORBIDDEN_HOST for c in ascii_host):
        return None
    if _ends_in_number(ascii_host):
        return _ipv4(ascii_host)
    return ascii_host


def inspect_url(url: str) -> UrlInspection:
    """Read ``url`` the way a browser does (WHATWG URL parsing, the parts that decide the host).

    Leading/trailing spaces and control characters are stripped and tabs/newlines removed; for special schemes
    (``http``, ``https``, ``ws``, ``wss``, ``ftp``, ``file``) any run of ``/`` or ``\\`` starts the authority
    (``https:evil.example`` and ``https:///evil.example/`` go to ``evil.example``), ``\\`` ends it like ``/``,
    user info ends at its *last* ``@``, and a host that ends in a number is an IPv4 address in any of the forms
    browsers accept (``0x7f000001`` is ``127.0.0.1``). A default port is dropped, another is kept.
    """
    text = url.strip(_C0_AND_SPACE)
    text = re.sub(r"[\t\n\r]", "", text)
    match = _SCHEME_RE.match(text)
    if match is None:
        return UrlInspection("", "", False, "not an absolute URL (no scheme): do not open it")
    scheme = match.group(0)[:-1].lower()
    rest = text[match.end() :]
    special = scheme in _SPECIAL_PORTS
    if scheme == "file":  # file: the host is only what sits between "//" and the next slash (often nothing)
        rest = rest[2:] if rest[:2] in ("//", "\\\\", "/\\", "\\/") else "/"
        ends = "/\\?#"
    elif special:
        rest = rest.lstrip("/\\")
        ends = "/\\?#"
    elif rest.startswith("//"):
        rest = rest[2:]
        ends = "/?#"
    else:  # an opaque URL (javascript:, data:, mailto:, ...): no host at all
        return UrlInspection(
            scheme,
            "",
            False,
            f"a {scheme}: URL, not a web page: it is never offered as a link; do not open it",
        )
    end = next((i for i, c in enumerate(rest) if c in ends), len(rest))
    authority = rest[:end]
    userinfo = "@" in authority
    hostport = authority.rsplit("@", 1)[-1]
    port = ""
    if not hostport.startswith("[") or "]:" in hostport:
        head, sep, tail = hostport.rpartition(":")
        if sep and (not head.startswith("[") or head.endswith("]")):
            hostport, port = head, tail
    if port and not port.isdigit():
        return UrlInspection(scheme, "", False, "the URL's port is not a number: a browser would refuse it")
    number = int(port) if port else None
    if number is not None and number > 65535:
        return UrlInspection(scheme, "", False, "the URL's port is out of range: a browser would refuse it")
    host = _host(hostport) if hostport else ("" if scheme == "file" else None)
    if host is None:
        return UrlInspection(scheme, "", False, "the URL's host is not valid: a browser would refuse it")
    if number is not None and number != _SPECIAL_PORTS.get(scheme):
        host = f"{host}:{number}"
    if scheme not in _LINK_SCHEMES:
        return UrlInspection(
            scheme, host, False, f"a {scheme}: URL, not a web page: it is never offered as a link"
        )
    if not host:
        return UrlInspection(scheme, "", False, "the URL has no host")
    warning = "the URL carries user info before '@' (it does not change where it goes)" if userinfo else None
    return UrlInspection(scheme, host, True, warning)


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
