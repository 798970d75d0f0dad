"""Per-run credentials: header values filled from the run's config, and the identity connections are keyed by.

Three ways a server's HTTP credentials can depend on the run:

* ``${configurable:NAME}`` in a header value (JSON or dict configs) is replaced by the run's
  ``config["configurable"][NAME]`` at call time; a run without that key gets a :class:`CredentialError` (an error
  ToolMessage for that call), never another user's connection.
* a server's ``credentials`` callable (in code) receives the run's config (``None`` outside a graph) and returns
  headers (merged over the configured ones) or an ``httpx2.Auth`` (return the *same* object for the same user:
  connections are keyed by it).
* an interceptor's ``request.override(headers=...)``.

``${env:NAME}`` is different: it is filled from the process environment when the config is loaded.

The resolved headers (and auth object) are the call's :class:`Identity`. Connections — and with them a legacy
server's session and its parked calls — and tool catalogs are kept per identity, so nothing one user's credentials
opened is used for another's call.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import httpx2

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

from langgraph_mcp.errors import CredentialError, LangGraphMcpError

__all__ = [
    "CALL_META",
    "CONFIGURABLE_PATTERN",
    "ENV_PATTERN",
    "RUN_CONFIG",
    "Identity",
    "current_config",
    "current_principal",
    "expand_env",
    "is_per_run",
    "label_value",
    "namespace_label",
    "principal_origin",
    "resolve_identity",
    "warn_client_principal",
]

ENV_PATTERN = re.compile(r"\$\{env:([^}]*)\}")
CONFIGURABLE_PATTERN = re.compile(r"\$\{configurable:([^}]*)\}")

RUN_CONFIG: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "langgraph_mcp_run_config", default=None
)
"""A run config given explicitly (``list_tools(config=...)``), used instead of the running graph's."""

CALL_META: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "langgraph_mcp_call_meta", default=None
)
"""What the ``tools/call`` sent in this context carries in its ``_meta`` besides the SDK's own (a decided call's
idempotency key, see :mod:`langgraph_mcp.approval.once`)."""


def current_config() -> RunnableConfig | None:
    """The running graph's config (LangGraph's ``get_config()``), or ``None`` outside a graph run."""
    # Imported here: loading a server config (the CLI checks one before anything else) needs no LangGraph.
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return None


def current_principal(config: Mapping[str, Any] | None = None) -> str | None:
    """Who runs the graph: ``configurable["langgraph_auth_user_id"]`` (what LangGraph Server sets when it
    authenticates a request), else ``configurable["user_id"]``; ``None`` when neither is a non-empty string.

    ``config`` defaults to :data:`RUN_CONFIG` or else the running graph's (``None`` outside a run). Remembered
    approvals and per-user sign-in key on this one answer; ``ApprovalPolicy(principal=fn)`` replaces it for a
    policy.
    """
    if config is None:
        config = RUN_CONFIG.get() or current_config()
    configurable = (config or {}).get("configurable") or {}
    for key in ("langgraph_auth_user_id", "user_id"):
        value = configurable.get(key)
        if isinstance(value, str) and value:
            return value
    return None


_LABEL_ESCAPED = re.compile(r"[%.\x00]")
_LABEL_ESCAPE = re.compile(r"%([0-9A-F]{2})")
_LABEL_READABLE = 64
_LABEL_LONGEST = 255
_LABEL_HASHED = "%23"


def namespace_label(value: str) -> str:
    """``value`` (a principal, a thread id: any string) as one LangGraph store namespace label; the one encoding
    every namespace the package writes uses.

    LangGraph refuses a label that is empty or holds ``.`` or NUL, and a store keys on the joined labels, so a
    label is ``value`` percent-escaped: ``%`` as ``%25``, ``.`` as ``%2E``, NUL as ``%00``, the empty string as
    a lone ``%`` (``"ann.lee"`` is ``"ann%2Elee"``). That is injective: two different values never share a
    label. A value whose escaped form is longer than 255 characters (a database index holds a few KB per row) is
    its first 64 escaped characters, ``%23`` (which no escaped value contains) and the SHA-256 of the value, still
    one label per value. :func:`label_value` reads a label back."""
    if not value:
        return "%"
    label = _LABEL_ESCAPED.sub(lambda m: f"%{ord(m.group()):02X}", value)
    if len(label) <= _LABEL_LONGEST:
        return label
    head = label[:_LABEL_READABLE]
    cut = head.rfind("%", len(head) - 2)
    head = head[:cut] if cut != -1 else head  # never half an escape
    return f"{head}{_LABEL_HASHED}{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()}"


def label_value(label: str) -> str:
    """The value :func:`namespace_label` made ``label`` from; a long value's label reads back as its first
    characters and ``…`` (its full value is kept where it matters: a remembered decision's signed owner)."""
    if label == "%":
        return ""
    head, hashed, _ = label.partition(_LABEL_HASHED)
    value = _LABEL_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), head)
    return f"{value}…" if hashed else value


def principal_origin(config: Mapping[str, Any] | None = None) -> Literal["authenticated", "client"] | None:
    """Where :func:`current_principal`'s answer comes from: ``"authenticated"`` (``langgraph_auth_user_id``, set
    by LangGraph Server's custom auth, which a client cannot override), ``"client"`` (``configurable.user_id``,
    which any client of the run sets as it likes), ``None`` without a principal."""
    if config is None:
        config = RUN_CONFIG.get() or current_config()
    configurable = (config or {}).get("configurable") or {}
    value = configurable.get("langgraph_auth_user_id")
    if isinstance(value, str) and value:
        return "authenticated"
    value = configurable.get("user_id")
    return "client" if isinstance(value, str) and value else None


_warned: set[str] = set()


def warn_client_principal(where: str) -> None:
    """Say once per process that a principal a client asserted decides something: a decision remembered for that
    user, or the OAuth tokens kept for them (see docs/security.md)."""
    if "client" in _warned:
        return
    _warned.add("client")
    warnings.warn(
        f"{where} is judged for a principal the client asserted (configurable.user_id): any client of the run "
        "can set it. Authenticate users (LangGraph custom auth, or ApprovalPolicy(principal=...)), or refuse "
        "client principals with Oversight(trust_client_principal=False); see docs/security.md",
        UserWarning,
        stacklevel=3,
    )


def expand_env(value: str, environ: Mapping[str, str] | None = None) -> str:
    """``value`` with every ``${env:NAME}`` replaced; raises ``ValueError`` naming a variable that is not set."""
    env = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ValueError(f"environment variable {name!r} is not set (used as ${{env:{name}}})")
        return env[name]

    return ENV_PATTERN.sub(replace, value)


@dataclass(frozen=True)
class Identity:
    """The credentials one call is sent with: the resolved headers and auth object (``None`` for none)."""

    headers: dict[str, str] | None = None
    """Every header value after substitution (``None``: the server's config has no headers to send)."""
    auth: httpx2.Auth | None = field(default=None, compare=False)
    per_run: bool = False
    """Whether these credentials came from the run (such identities are closed when idle and capped)."""

    @functools.cached_property
    def key(self) -> tuple[str, int | None]:
        """A hashable key that tells identities apart without holding secrets in plain text."""
        digest = hashlib.sha256()
        for name, value in sorted((self.headers or {}).items()):
            digest.update(name.lower().encode() + b"\0" + value.encode() + b"\0")
        return digest.hexdigest(), (id(self.auth) if self.auth is not None else None)

    def apply(self, spec: Any) -> Any:
        """``spec`` with these headers and auth in place of its templates or callables."""
        if not hasattr(spec, "headers"):
            return spec
        update: dict[str, Any] = {"headers": dict(self.headers or {}), "credentials": None}
        if hasattr(spec, "auth"):
            update["auth"] = self.auth
        return spec.model_copy(update=update)


def _has_templates(headers: Any) -> bool:
    return isinstance(headers, Mapping) and any(CONFIGURABLE_PATTERN.search(v) for v in headers.values())


def is_per_run(spec: Any) -> bool:
    """Whether ``spec``'s credentials depend on the run (``${configurable:...}`` templates, a callable, or a
    per-user OAuth sign-in)."""
    return (
        getattr(spec, "credentials", None) is not None
        or getattr(spec, "oauth", None) is not None
        or _has_templates(getattr(spec, "headers", None))
    )


def _configurable_value(server: str, configurable: Mapping[str, Any], header: str, name: str) -> str:
    if name not in configurable or configurable[name] is None:
        raise CredentialError(
            server,
            f"header {header!r} needs config['configurable'][{name!r}] (from ${{configurable:{name}}}), "
            "and this run has none; pass it in the run's config, e.g. "
            f'graph.invoke(..., {{"configurable": {{"{name}": ...}}}})',
        )
    return _header_value(server, header, str(configurable[name]))


def _header_value(server: str, header: str, value: str) -> str:
    if "\r" in value or "\n" in value or "\0" in value:
        raise CredentialError(server, f"the run's value for header {header!r} contains a line break; refused")
    return value


def resolve_identity(
    server: str,
    spec: Any,
    config: Mapping[str, Any] | None,
    override_headers: Mapping[str, str] | None = None,
) -> Identity:
    """The identity a call to ``server`` is sent with in a run with ``config``.

    ``override_headers`` (from an interceptor) replace the resolved headers as a whole.
    """
    if not hasattr(spec, "headers"):
        return Identity()  # stdio and in-process servers have no per-call credentials
    headers_spec: Mapping[str, str] = getattr(spec, "headers", None) or {}
    auth: httpx2.Auth | None = getattr(spec, "auth", None)
    factory = getattr(spec, "credentials", None)
    per_run = is_per_run(spec)
    if not per_run and override_headers is None:
        return Identity(headers=dict(headers_spec) or None, auth=auth)
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    headers: dict[str, str] = {}
    for header, value in headers_spec.items():
        headers[header] = CONFIGURABLE_PATTERN.sub(
            lambda m, header=header: _configurable_value(server, configurable, header, m.group(1)),  # type: ignore[misc]
            value,
        )
    if factory is not None:
        made = _call(server, factory, config)
        if isinstance(made, httpx2.Auth):
            if not hasattr(spec, "auth"):
                raise CredentialError(
                    server,
                    "the credentials callable returned an httpx2.Auth; this transport "
                    "takes headers only (return a dict)",
                )
            auth = made
        elif isinstance(made, Mapping):
            headers.update({str(k): _header_value(server, str(k), str(v)) for k, v in made.items()})
        elif made is not None:
            raise CredentialError(
                server,
                f"the credentials callable returned {type(made).__name__}; return a dict or an httpx2.Auth",
            )
    if override_headers is not None:
        changed = dict(override_headers) != headers
        headers = dict(override_headers)
        per_run = per_run or changed
    return Identity(headers=headers, auth=auth, per_run=per_run)


def _call(server: str, factory: Callable[..., Any], config: Mapping[str, Any] | None) -> Any:
    try:
        return factory(config)
    except LangGraphMcpError:
        raise
    except Exception as exc:
        raise CredentialError(server, f"the credentials callable failed: {exc!r}") from exc
