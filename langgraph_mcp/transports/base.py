"""What a transport is: its config model, how it opens a client, and what a decision about its server binds to.

Every server config model is a :class:`Transport` (a pydantic model over the options every server shares,
:class:`ServerOptions`). A transport says three things, and the class cannot be registered without them (they are
abstract: :func:`register_transport` refuses a class that leaves one out, naming it):

- :meth:`Transport.open_client`: the unentered ``mcp.Client`` for one start of the server;
- :meth:`Transport.binding`: everything in its config that selects the backend (a URL and every static header; a
  command line, its working directory and environment). A decision about a call is bound to a keyed hash of it
  (:func:`~langgraph_mcp.policy.binding.server_identity`), so a config that points the same server name at another
  backend (another tenant's API key, a prod environment instead of staging) is another server: nothing decided
  about the old one carries over. Forget a field here and remembered approvals follow the name to a new backend;
  hence a method every transport must write, not a default;
- :meth:`Transport.location`: where the server is, in words a person reads (the CLI's column; never a secret).

What differs between transports beyond that is a method with a default here, overridden where it applies (the
listing's freshness on HTTP, a legacy HTTP session that is gone, the pool's call slots, a stdio server's stderr).

Adding a transport: a module in this folder with its model, and one :func:`register_transport` line in
``transports/__init__.py``. ``tests/transports/test_extension_transport.py`` does it for an in-memory pipe, as an example.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, SerializeAsAny
from pydantic_core import PydanticCustomError

from langgraph_mcp.errors import TransportError

if (
    TYPE_CHECKING
):  # the mcp SDK is imported when a client is opened, not when a config is read (the CLI's typo check)
    from mcp import Client
    from mcp.client import Transport as StreamsContext

__all__ = [
    "TRANSPORTS",
    "OutputRouting",
    "ProtocolMode",
    "Route",
    "ServerOptions",
    "ServerSpec",
    "StartNotes",
    "Transport",
    "WatchStreams",
    "register_transport",
    "transport_of",
]

ProtocolMode: TypeAlias = Literal["auto", "modern", "legacy"]
Route: TypeAlias = Literal["content", "artifact"]

WatchStreams: TypeAlias = "Callable[[AbstractAsyncContextManager[Any]], StreamsContext]"
"""Wraps a transport's (read, write) stream pair so the connection sees the end of the stream and bad messages
(:class:`~langgraph_mcp.connection.watch.TransportWatch`)."""


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


class ServerOptions(BaseModel):
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
    apps: bool = False
    """MCP Apps (``io.modelcontextprotocol/ui``): advertise the extension to a server that offers it, and give a call
    to a tool with a ``ui://`` resource its app (the resource, its ``_meta.ui``, the call's input and result) in the
    ToolMessage's artifact and as an ``mcp_app`` generative UI message (see docs/mcp-apps.md). Off: no app is read or
    shown. App-only tools (``visibility: ["app"]``) are never offered to a model either way."""
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


class StartNotes:
    """What a transport keeps about one start of its server beside the client (a stdio server's stderr): made by
    :meth:`Transport.start_notes` before the client, closed when that start ends."""

    def close(self) -> None:
        """The start ended (the client is closed): let go of what was kept."""

    def explain(self) -> str:
        """What to add to the message of a start that failed (``"; ..."``), or ``""``."""
        return ""


class Transport(ServerOptions, ABC):
    """A server config model that is a transport: its tag, how it opens a client, what a decision binds to.

    A subclass sets ``transport`` to a ``Literal`` tag with that tag as default, implements the abstract methods,
    and is registered with :func:`register_transport`."""

    transport: str
    """The transport's tag (``stdio``, ``streamable_http``, ...): optional in a config file when the entry's keys
    say it (see :meth:`recognizes`)."""

    aliases: ClassVar[tuple[str, ...]] = ()
    """Other names a config file may give as its ``transport`` (or ``type``), normalised (lower case, ``_``)."""
    recognized_by: ClassVar[str] = ""
    """How an entry without a ``transport`` says it is this one, for the error that could not tell (``"'command'
    (stdio)"``); empty when only the tag says it."""
    each_client_starts_a_server: ClassVar[bool] = False
    """Whether every client opened starts a server of its own (a stdio process): then one start opens one client,
    told of every extension at once, instead of a discovering client and, when the server offers one, a second."""

    @classmethod
    def recognizes(cls, entry: Mapping[str, Any]) -> bool:
        """Whether a config entry that names no transport is this one (from its keys)."""
        return False

    @abstractmethod
    def binding(self) -> dict[str, Any]:
        """Everything in this config that selects the backend the server name reaches, JSON-shaped: a decision about
        one of its calls is bound to a keyed hash of it, so changing any of it asks again. Values may be secrets
        (API keys, tokens in headers or the environment): they are only ever hashed with a key, never shown or
        stored."""

    @abstractmethod
    def location(self) -> str:
        """Where the server is, for a person (a URL, a command line, ``in-process``): never a secret."""

    @abstractmethod
    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        """An unentered ``mcp.Client`` for one start; ``notes`` is this start's :meth:`start_notes`, ``watch``
        wraps a stream pair, ``common`` holds the callbacks and options every transport's client is given."""

    def start_notes(self, server: str) -> StartNotes:
        """What to keep about one start of ``server`` beside its client (default: nothing)."""
        return StartNotes()

    def listing_expiry(self) -> float | None:
        """Seconds a ``tools/list`` without a ``ttlMs`` hint is trusted, or ``None``: until the server says its tools
        changed or the connection starts a new session (default)."""
        return None

    def session_gone(self, error: BaseException) -> bool:
        """Whether ``error`` says the server no longer knows this connection's session, having run nothing (the
        request may be sent again on a new session). Default: no transport-level session to lose."""
        return False

    def legacy_call_slots(self) -> int | None:
        """How many legacy ``tools/call`` may hold one of the transport's pooled connections at once, or ``None``
        (no pool: default)."""
        return None


TRANSPORTS: dict[str, type[Transport]] = {}
"""Every registered transport by tag, in the order registered (see ``transports/__init__.py``)."""


def register_transport(cls: type[Transport]) -> type[Transport]:
    """Add ``cls`` to the transports a server config may name; returns it (usable as a class decorator).

    Raises :class:`~langgraph_mcp.errors.TransportError` when ``cls`` is not a :class:`Transport`, leaves out one
    of its abstract methods (above all :meth:`Transport.binding`: what a decision about its server binds to), has
    no ``Literal`` tag with that default, or takes a tag or alias another transport has."""
    if not (isinstance(cls, type) and issubclass(cls, Transport)):
        raise TransportError(f"{cls!r} is not a Transport subclass (langgraph_mcp.transports.base.Transport)")
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        why = (
            " (binding(): everything that selects the backend, so a decision about one backend never carries "
            "over to another)"
            if "binding" in missing
            else ""
        )
        raise TransportError(
            f"transport {cls.__name__} cannot be registered: it does not implement {', '.join(missing)}{why}"
        )
    tag = cls.model_fields["transport"].default
    if not isinstance(tag, str) or not tag:
        raise TransportError(f"transport {cls.__name__} needs a tag: transport: Literal['<tag>'] = '<tag>'")
    for name in (tag, *cls.aliases):
        owner = TRANSPORTS.get(name) or next((t for t in TRANSPORTS.values() if name in t.aliases), None)
        if owner is not None and owner is not cls:
            raise TransportError(f"transport tag {name!r} of {cls.__name__} is {owner.__name__}'s already")
    TRANSPORTS[tag] = cls
    return cls


def _normalized(tag: object) -> str:
    name = str(tag).replace("-", "_").lower()
    for registered, cls in TRANSPORTS.items():
        if name == registered or name in cls.aliases:
            return registered
    return name


def transport_of(value: Any) -> str | None:
    """The transport tag of a server entry (a model or a config dict): given (``transport`` or ``type``, aliases
    normalised), else the first registered transport that recognizes the entry's keys; ``None`` if none does."""
    if isinstance(value, BaseModel):
        tag = getattr(value, "transport", None)
        return tag if isinstance(tag, str) else None
    if not isinstance(value, Mapping):
        return None
    explicit = value.get("transport", value.get("type"))
    if explicit is not None:
        return _normalized(explicit)
    return next((tag for tag, cls in TRANSPORTS.items() if cls.recognizes(value)), None)


def _cannot_tell() -> str:
    hints = list(dict.fromkeys(cls.recognized_by for cls in TRANSPORTS.values() if cls.recognized_by))
    return f"cannot tell the transport: give {', '.join(hints)} or 'transport' ({' | '.join(TRANSPORTS)})"


def _validate_spec(value: Any) -> Transport:
    """A server entry as the registered transport it names or its keys say (pydantic's errors keep their
    location under the server's name)."""
    if isinstance(value, Transport):
        registered = TRANSPORTS.get(value.transport)
        if registered is None or not isinstance(value, registered):
            raise PydanticCustomError(
                "server_transport", f"transport {type(value).__name__} is not registered (register_transport)"
            )
        return value
    if not isinstance(value, Mapping):
        raise PydanticCustomError("server_transport", f"{_cannot_tell()}; got {type(value).__name__}")
    tag = transport_of(value)
    if tag is None:
        raise PydanticCustomError("server_transport", _cannot_tell())
    cls = TRANSPORTS.get(tag)
    if cls is None:
        raise PydanticCustomError(
            "server_transport", f"unknown transport {tag!r}: the transports are {' | '.join(TRANSPORTS)}"
        )
    entry = {name: item for name, item in value.items() if name != "type"}
    if "transport" in value or "type" in value:
        entry["transport"] = tag
    return cls.model_validate(entry)


ServerSpec: TypeAlias = Annotated[SerializeAsAny[Transport], PlainValidator(_validate_spec)]
"""One server's config: any registered transport (told by its tag or its keys)."""
