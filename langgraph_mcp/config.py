"""Server configuration: pydantic models for stdio, streamable HTTP, SSE and in-process MCP servers.

Accepts the common ``{"mcpServers": {name: {...}}}`` JSON shape, a plain ``{name: {...}}`` dict, or model
instances. A bad entry raises :class:`~langgraph_mcp.errors.ConfigError` naming the server and the field.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import httpx2
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from langgraph_mcp.credentials import expand_env
from langgraph_mcp.errors import ConfigError, problems

ProtocolMode: TypeAlias = Literal["auto", "modern", "legacy"]
Route: TypeAlias = Literal["content", "artifact"]

SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

CredentialsFactory: TypeAlias = Callable[[Any], "Mapping[str, str] | httpx2.Auth | None"]
"""Receives the run's config (``None`` outside a graph) and returns headers for this run (merged over the
configured ones) or an ``httpx2.Auth``. See :mod:`langgraph_mcp.credentials`."""


def _expand_env_in_headers(value: Any) -> Any:
    if isinstance(value, dict):
        return {name: expand_env(v) if isinstance(v, str) else v for name, v in value.items()}
    return value


class OutputRouting(BaseModel):
    """Where each kind of MCP content goes in the ToolMessage: ``content`` (the model sees it) or ``artifact``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: Route = "content"
    """Text blocks."""
    image: Route = "content"
    """Image blocks (base64 data and MIME type)."""
    audio: Route = "content"
    """Audio blocks."""
    resource: Route = "content"
    """Embedded resources (text or blob contents)."""
    resource_link: Route = "content"
    """Links to resources the server can serve (``resources/read``)."""


class _ServerOptions(BaseModel):
    """Options every transport shares."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    mode: ProtocolMode = "auto"
    """``auto`` probes for 2026-07-28 and falls back to the handshake; ``modern``/``legacy`` force an era."""
    tool_timeout: float = Field(60.0, gt=0)
    """Seconds a tool call may run (per round trip). Finite by default: the SDK's default waits forever."""
    connect_timeout: float = Field(30.0, gt=0)
    """Seconds to connect and list tools before the server counts as unreachable."""
    prefix: bool = True
    """Publish tools as ``<server><separator><tool>``; turn off to publish the server's own names."""
    trust_annotations: bool = True
    """When false, the approval gate asks about every call to this server, whatever it declares."""
    max_elicitation_rounds: int = Field(10, ge=1)
    """A call that asks more rounds of questions than this ends with an error ToolMessage."""
    output: OutputRouting | None = None
    """Per-server override of the global output routing."""
    restart_attempts: int = Field(3, ge=0)
    """Restarts (stdio) or reconnects (HTTP) per outage, each after its backoff delay, before calls fail fast;
    after that one attempt per backoff period (the server comes back when it is back)."""
    reconnect_backoff: float = Field(0.5, ge=0)
    """Seconds before the first reconnect of an outage; doubles per failed attempt (jittered, capped)."""
    reconnect_backoff_max: float = Field(30.0, ge=0)
    """The cap on the reconnect delay, in seconds."""
    max_result_bytes: int = Field(32 * 1024 * 1024, gt=0)
    """The largest response (one SSE event on HTTP) accepted; past it the call fails with "result too large"."""
    max_list_pages: int = Field(1000, ge=1)
    """A ``tools/list`` that paginates past this many pages fails discovery for the server."""
    max_tools: int = Field(10_000, ge=1)
    """A server listing more tools than this fails discovery (a runaway pagination, not a real catalog)."""
    max_parked_calls: int = Field(200, ge=1)
    """The most legacy calls that may wait for a human at once on this connection (over HTTP, fewer if
    ``max_connections`` leaves fewer). Past it a new pause is not kept open: a tool whose trusted hints say read-only
    or idempotent has its call cancelled on the server and re-issued on resume; any other tool's call is cancelled
    and ends with an error naming this setting (``TooManyParkedCallsError``), never re-issued, since a server that
    ignores the cancellation would run it twice. HTTP pools are sized past it (each parked call holds one response
    open)."""
    retries: int = Field(2, ge=0)
    """Retries after a transport failure, only for tools whose hints say read-only or idempotent."""
    sampling_model: Any = None
    """A LangChain chat model that answers this server's ``sampling/createMessage`` requests (both eras). ``None``
    (the default): sampling is refused, with a clear error. In a server config the ``langgraph-mcp`` CLI reads, a
    name: ``"scripted"`` (the offline ``ScriptedSamplingModel``) or ``"provider:model"`` (``init_chat_model``)."""
    sampling_policy: Literal["allow", "ask", "deny"] = "ask"
    """With a ``sampling_model``: ``ask`` pauses the graph with an ``mcp_sampling`` interrupt (approve / edit the
    messages / reject), ``allow`` runs the model, ``deny`` refuses."""
    review_completion: bool = False
    """With a ``sampling_model``: show the model's completion to a human before it goes back to the server (an
    ``mcp_sampling_review`` interrupt: approve / edit the text / reject), under any ``sampling_policy`` but
    ``deny``. The completion is kept in the checkpoint, so a re-run shows the same text and the model is not
    called again."""
    sampling_max_tokens: int = Field(1024, ge=1)
    """The most tokens one completion may use, whatever the server's ``maxTokens`` asks."""
    sampling_max_requests: int = Field(10, ge=0)
    """The most sampling requests this server may make per graph run and credential identity; past it, refused."""
    tasks: bool = True
    """2026-07-28 era: advertise the MCP Tasks extension (``io.modelcontextprotocol/tasks``), so a server that
    offers it may answer a call with a task, polled to its end and kept in the checkpoint (see README, "Long-running
    tools"). Off: the server must answer every call directly."""
    task_poll_floor: float = Field(0.05, gt=0)
    """Seconds: the shortest wait between two ``tasks/get`` of one task, whatever ``pollIntervalMs`` says."""
    task_poll_cap: float = Field(5.0, gt=0)
    """Seconds: the longest wait between two ``tasks/get`` of one task, whatever ``pollIntervalMs`` says."""
    park_timeout: float = Field(600.0, gt=0)
    """Seconds a legacy call may stay open waiting for a human before it is cancelled (then resumed by replay)."""
    exclusive_tools: list[str] | Literal["all"] = Field(default_factory=list)
    """Legacy era: tools whose calls run alone on the connection (``"all"``: every call), so a question they push
    can never be ambiguous. Only matters where the transport names no originating request (stdio, SSE): a tool seen
    to ask is run alone automatically, but the first concurrent burst before that may have a question refused (see
    ``langgraph_mcp.connection.legacy_routing``)."""
    question_match: Literal["strict", "schema"] = "strict"
    """How a replayed legacy question is matched to a stored answer: message and schema, or schema only."""
    roots: list[str] | None = None
    """Directories (paths or ``file://`` URIs) offered when the server asks for roots; ``None`` refuses."""
    log_level: (
        Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] | None
    ) = None
    """The lowest level of log messages to ask the server for (legacy: ``logging/setLevel`` on connect; 2026-07-28:
    on every request). ``None``: legacy servers send what they like, modern ones send nothing."""


class StdioServer(_ServerOptions):
    """A server started as a subprocess speaking JSON-RPC over stdin/stdout."""

    transport: Literal["stdio"] = "stdio"
    """Optional in a config file: a ``command`` says stdio."""
    command: str = Field(min_length=1)
    """The program to start (found on ``PATH``, or a path)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] | None = None
    """Extra environment (merged over the SDK's minimal default environment: HOME, PATH, ...)."""
    cwd: str | None = None
    """The working directory to start it in (default: this process's)."""
    stderr: Literal["log"] | str = "log"
    """``log``: the child's stderr goes to the ``langgraph_mcp.server.<name>`` logger; else a file path."""


class OAuthOptions(BaseModel):
    """Per-user OAuth sign-in for a streamable-HTTP server (the MCP authorization spec, through the mcp SDK's
    ``OAuthClientProvider``): a call for a principal without a token pauses with an ``mcp_authorization``
    interrupt. Tokens and client registrations are kept per principal in the graph's store."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    redirect_uri: str = Field(pattern=r"^https?://")
    """Where the authorization server sends the browser after sign-in: a page of yours that hands the full
    address it was opened at back to the run (README, "Signing in to OAuth-protected servers")."""
    scopes: list[str] = Field(default_factory=list)
    """Scopes asked for on top of what the server names (its ``WWW-Authenticate`` or metadata)."""
    client_name: str | None = None
    """The client name shown on the authorization server's consent page (dynamic registration)."""
    client_metadata_url: str | None = Field(None, pattern=r"^https://")
    """A client ID metadata document URL (HTTPS, with a path): used as the client id where the authorization
    server supports it, instead of dynamic registration."""
    principal_key: str | None = None
    """Read the principal from ``config["configurable"][principal_key]`` instead of ``langgraph_auth_user_id`` /
    ``user_id``."""


class HttpServer(_ServerOptions):
    """A server reached over streamable HTTP."""

    transport: Literal["streamable_http"] = "streamable_http"
    """Optional in a config file: a ``url`` says streamable HTTP (unless it ends in ``/sse``)."""
    url: str = Field(pattern=r"^https?://")
    """The server's MCP endpoint (``http://`` or ``https://``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request; values may use ``${env:NAME}`` (at load) and ``${configurable:NAME}`` (per run)."""
    auth: httpx2.Auth | None = Field(default=None, exclude=True)
    """Any ``httpx2.Auth`` (e.g. mcp's ``OAuthClientProvider``); not loadable from JSON."""
    credentials: CredentialsFactory | None = Field(default=None, exclude=True)
    """Per-run credentials in code: called with the run's config, returns headers or an ``httpx2.Auth`` (return
    the same Auth object for the same user: connections are kept per credentials); not loadable from JSON."""
    timeout: float = Field(30.0, gt=0)
    """HTTP connect/write timeout in seconds."""
    read_timeout: float = Field(300.0, gt=0)
    """HTTP read timeout in seconds (also bounds a held-open legacy SSE stream)."""
    max_connections: int | None = Field(None, ge=1)
    """The HTTP connection pool size; default ``max_parked_calls`` + 32."""
    listing_max_age: float | None = Field(60.0, gt=0)
    """Seconds a ``tools/list`` without a ``ttlMs`` hint is trusted before it is listed again (``None``: until the
    server says its tools changed). A 2026-07-28 server has no session, so nothing else tells a redeploy on the
    same URL; a legacy server's new session drops the listing at once. Re-listing costs one request."""
    oauth: OAuthOptions | None = None
    """Per-user OAuth sign-in (see :class:`OAuthOptions`); not together with ``auth`` or ``credentials``."""

    @model_validator(mode="after")
    def _one_way_to_authenticate(self) -> HttpServer:
        if self.oauth is not None and (self.auth is not None or self.credentials is not None):
            raise ValueError("'oauth' signs each user in itself: give it without 'auth' or 'credentials'")
        return self

    @field_validator("headers", mode="before")
    @classmethod
    def _fill_env(cls, value: Any) -> Any:
        return _expand_env_in_headers(value)


class SseServer(_ServerOptions):
    """A server reached over the legacy HTTP+SSE transport."""

    transport: Literal["sse"] = "sse"
    """Optional when the ``url`` ends in ``/sse``; any other bare ``url`` means streamable HTTP."""
    url: str = Field(pattern=r"^https?://")
    """The server's SSE endpoint."""
    headers: dict[str, str] = Field(default_factory=dict)
    """As for streamable HTTP: ``${env:NAME}`` (at load) and ``${configurable:NAME}`` (per run)."""
    credentials: CredentialsFactory | None = Field(default=None, exclude=True)
    """As for streamable HTTP, headers only."""
    timeout: float = Field(5.0, gt=0)
    """HTTP connect/write timeout in seconds for its POSTs."""
    sse_read_timeout: float = Field(300.0, gt=0)
    """Seconds the event stream may stay silent before the connection counts as lost."""

    @field_validator("headers", mode="before")
    @classmethod
    def _fill_env(cls, value: Any) -> Any:
        return _expand_env_in_headers(value)


class InProcessServer(_ServerOptions):
    """An ``MCPServer`` (or low-level ``Server``) object in this process: no subprocess, no sockets."""

    transport: Literal["in_process"] = "in_process"
    """Optional: a ``server`` object says in-process (given in code, never loaded from a file)."""
    server: Any = Field(exclude=True)
    """The ``MCPServer`` or low-level ``Server`` object, connected through the SDK's in-memory streams."""


def _transport_of(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return getattr(value, "transport", None)
    if not isinstance(value, dict):
        return None
    explicit = value.get("transport", value.get("type"))
    if explicit is not None:
        normalized = str(explicit).replace("-", "_").lower()
        aliases = {"http": "streamable_http", "streamablehttp": "streamable_http", "inprocess": "in_process"}
        return aliases.get(normalized, normalized)
    if "command" in value:
        return "stdio"
    if "server" in value:
        return "in_process"
    if "url" in value:
        return "sse" if str(value["url"]).rstrip("/").endswith("/sse") else "streamable_http"
    return None


ServerSpec: TypeAlias = Annotated[
    Annotated[StdioServer, Tag("stdio")]
    | Annotated[HttpServer, Tag("streamable_http")]
    | Annotated[SseServer, Tag("sse")]
    | Annotated[InProcessServer, Tag("in_process")],
    Discriminator(
        _transport_of,
        custom_error_type="server_transport",
        custom_error_message=(
            "cannot tell the transport: give 'command' (stdio), 'url' (streamable HTTP or SSE) "
            "or 'transport' (stdio | streamable_http | sse | in_process)"
        ),
    ),
]


class McpServersConfig(BaseModel):
    """Every server plus the options that span servers."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    servers: dict[str, ServerSpec]
    """Each server by name (``mcpServers`` in a file); the name prefixes its tools' published names."""
    output: OutputRouting = OutputRouting()
    """Default output routing; a server's own ``output`` wins."""
    separator: str = Field("_", pattern=r"^[A-Za-z0-9_-]{0,8}$")
    """Between server and tool name in published names."""
    invalid_names: Literal["skip", "sanitize"] = "skip"
    """Tool names that model providers would refuse: skip (and report) them, or rename them."""
    approval_key: SecretStr | None = Field(default=None, exclude=True)
    """The secret decisions are signed with (HMAC-SHA256), so that the tool node of any worker can tell a
    decision taken by this graph from state a client wrote. Default: the ``LANGGRAPH_MCP_APPROVAL_KEY``
    environment variable, else a random key of this process (a decision then proves itself only in the process
    that took it: set one key on every worker of a deployment)."""

    @field_validator("servers", mode="before")
    @classmethod
    def _normalize_entries(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        normalized: dict[str, Any] = {}
        for name, entry in value.items():
            if isinstance(entry, dict) and "transport" not in entry and "type" in entry:
                entry = {**entry, "transport": _transport_of(entry)}
                entry.pop("type", None)
            elif isinstance(entry, dict) and "transport" in entry:
                entry = {**entry, "transport": _transport_of(entry)}
            normalized[name] = entry
        return normalized

    @field_validator("servers")
    @classmethod
    def _check_names(cls, value: dict[str, ServerSpec]) -> dict[str, ServerSpec]:
        for name in value:
            if not SERVER_NAME_PATTERN.match(name):
                raise ValueError(
                    f"server name {name!r} must be 1-64 letters, digits, '_' or '-' (it prefixes tool names)"
                )
        return value

    def routing_for(self, server: str) -> OutputRouting:
        return self.servers[server].output or self.output

    @classmethod
    def load(cls, source: McpServersConfig | Mapping[str, Any] | str | Path) -> McpServersConfig:
        """Build a config from a model, a dict (``mcpServers`` shape or plain) or a JSON file path."""
        if isinstance(source, McpServersConfig):
            return source
        if isinstance(source, str | Path):
            path = Path(source)
            try:
                data = json.loads(path.read_text())
            except OSError as exc:
                raise ConfigError(f"cannot read server config {str(path)!r}: {exc.strerror}") from exc
            except json.JSONDecodeError as exc:
                raise ConfigError(f"server config {str(path)!r} is not valid JSON: {exc}") from exc
            if not isinstance(data, dict):
                raise ConfigError(
                    f'server config {str(path)!r} must be a JSON object ({{"mcpServers": {{...}}}}), '
                    f"got {type(data).__name__}"
                )
            return cls.load(data)
        data = dict(source)
        if "mcpServers" in data:
            top = {k: v for k, v in data.items() if k != "mcpServers"}
            data = {"servers": data["mcpServers"], **top}
        elif "servers" not in data:
            data = {"servers": data}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, data.get("servers"))) from exc


_TRANSPORT_TAGS = frozenset({"stdio", "streamable_http", "sse", "in_process"})
"""The transport discriminator tags pydantic puts into a server entry's error location."""


_SPEC_MODELS: dict[str, type[BaseModel]] = {
    "stdio": StdioServer,
    "streamable_http": HttpServer,
    "sse": SseServer,
    "in_process": InProcessServer,
}


def _did_you_mean(entry: object, key: str | None = None) -> str:
    """`` (did you mean 'command'?)`` for a misspelt key of a server entry (``key``, or any key of it), or ``""``."""
    if not isinstance(entry, Mapping):
        return ""
    transport = _transport_of(dict(entry))
    models = [_SPEC_MODELS[transport]] if transport in _SPEC_MODELS else list(_SPEC_MODELS.values())
    known = sorted({"transport", "type"}.union(*(model.model_fields for model in models)))
    hints = []
    for unknown in [key] if key is not None else [k for k in entry if k not in known]:
        close = difflib.get_close_matches(str(unknown), known, n=1, cutoff=0.75)
        if close and close[0] not in entry:
            hints.append(
                f"{unknown!r}: did you mean {close[0]!r}?" if key is None else f"did you mean {close[0]!r}?"
            )
    return f" ({'; '.join(hints)})" if hints else ""


def _describe(exc: ValidationError, servers: object = None) -> str:
    entries = servers if isinstance(servers, Mapping) else {}
    lines = []
    for problem in problems(exc, tags=_TRANSPORT_TAGS):
        loc = [str(part) for part in problem.location]
        hint = ""
        if len(loc) >= 2 and loc[0] == "servers":
            fields = loc[2:]
            where = f"server {loc[1]!r}" + (f", field {'.'.join(fields)!r}" if fields else "")
            entry = entries.get(loc[1])
            if not fields:  # the transport could not be told: a misspelt command/url/transport?
                hint = _did_you_mean(entry)
            elif len(fields) == 1 and problem.message.startswith("Extra inputs are not permitted"):
                hint = _did_you_mean(entry, fields[0])
        else:
            where = f"field {'.'.join(loc)!r}" if loc else "config"
        lines.append(f"{where}: {problem.message}{hint}")
    return "invalid MCP server config:\n  " + "\n  ".join(lines)
