"""The one door to dependencies' private internals: each access guarded, with a documented fallback or a clear error.

No other module of the package names a private module or attribute of a dependency. Each entry is guarded the way
``langgraph/prebuilt/tool_node.py`` guards ``CONFIG_KEY_READ_STATE``: an import or attribute check, then either a
documented fallback or an :class:`~langgraph_mcp.errors.IncompatibleDependencyError` naming the installed version.
``tests/package/test_compat_langgraph.py`` checks every entry against the installed dependency, so an upgrade that changes
one fails there with a message saying which.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol, cast

import httpcore2
import httpx2
import mcp.types as types
from mcp import ClientSession, MCPError

from langgraph_mcp.errors import IncompatibleDependencyError

# ================================================================================================= langgraph
#
# What LangGraph 1.2 has no public API for:
# * ``RunnableCallable`` — the node base class ``ToolNode`` itself subclasses (config injection, sync + async).
# * The task's resume values — ``interrupt()`` keeps them on the pregel scratchpad; the answer book needs to see
#   all of them (to match stored answers to questions by key) without consuming them.
# * Whether the run has a checkpointer — LangGraph puts it in ``config["configurable"]``.
# * What a pending interrupt showed — saved as a pending write on the checkpoint's ``__interrupt__`` channel; read
#   through the public checkpointer API (``aget_tuple``), found by LangGraph's interrupt id.
# * What a task's checkpoint keeps for it (pending interrupts, ``@task`` return values on ``__return__``): a kept
#   sampling completion is found there by its own key (``kept_task_values``). Fallback: nothing found, so the
#   completion is made again and reviewed anew (never a stored decision applied to a text nobody saw).

LANGGRAPH_VERSION = importlib.metadata.version("langgraph")

try:
    from langgraph._internal._runnable import RunnableCallable as RunnableCallable
except ImportError as exc:  # pragma: no cover - no fallback: the node classes are built on it
    raise IncompatibleDependencyError(
        "langgraph",
        LANGGRAPH_VERSION,
        "has no langgraph._internal._runnable.RunnableCallable, the base class of McpToolNode and the approval "
        "gate (as of langgraph.prebuilt.ToolNode); langgraph-mcp supports langgraph 1.2.x",
    ) from exc

# Fallbacks for the config keys: a langgraph that stops exporting a constant still sets the key under this name.
try:
    # Public (kept in langgraph.constants.__all__ for backwards compatibility).
    from langgraph.constants import CONFIG_KEY_CHECKPOINTER
except ImportError:  # pragma: no cover
    CONFIG_KEY_CHECKPOINTER = "__pregel_checkpointer"

try:
    from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
except ImportError:  # pragma: no cover
    CONFIG_KEY_SCRATCHPAD = "__pregel_scratchpad"


class TaskScratchpad(Protocol):
    """The parts of LangGraph's ``PregelScratchpad`` the answer book reads."""

    resume: list[Any]
    get_null_resume: Callable[[bool], Any]


try:
    from langgraph._internal._constants import CONFIG_KEY_CALL
    from langgraph.pregel._runner import _acall as _async_call
except ImportError:  # pragma: no cover - moved: durable task handles fall back to polling in memory
    CONFIG_KEY_CALL = "__pregel_call"
    _async_call = cast(Any, None)


def mark_invalid_resume(error: BaseException) -> None:
    """Mark ``error`` as a refused resume value, as ``interrupt()`` marks the ``ValidationError`` it raises, so
    ``langgraph.errors.is_invalid_resume`` (ToolNode, our node and driver) treats it the same way."""
    from langgraph.errors import _mark_invalid_resume, is_invalid_resume

    _mark_invalid_resume(error)
    if not is_invalid_resume(error):  # the private marker changed: never let a refusal pass as a tool error
        raise IncompatibleDependencyError(
            "langgraph",
            LANGGRAPH_VERSION,
            "changed langgraph.errors._mark_invalid_resume (it no longer marks an error as a refused resume "
            "value); langgraph-mcp supports langgraph 1.2.x",
        )


def has_checkpointer(configurable: Mapping[str, Any]) -> bool:
    """Whether the run behind ``config["configurable"]`` has a checkpointer (so a task can pause)."""
    return configurable.get(CONFIG_KEY_CHECKPOINTER) is not None


def run_checkpointer(configurable: Mapping[str, Any]) -> Any:
    """The checkpointer of the run behind ``config["configurable"]`` (``None``: it has none)."""
    return configurable.get(CONFIG_KEY_CHECKPOINTER)


def in_graph_task(configurable: Mapping[str, Any]) -> bool:
    """Whether ``config["configurable"]`` belongs to a task of a running graph (not a plain runnable call)."""
    return CONFIG_KEY_SCRATCHPAD in configurable


def runs_async_tasks(configurable: Mapping[str, Any]) -> bool:
    """Whether the running graph task can call an ``async`` LangGraph ``@task`` (an async run: ``ainvoke`` /
    ``astream``). LangGraph's sync runner refuses async tasks, and says so only when one is called."""
    call = configurable.get(CONFIG_KEY_CALL)
    return getattr(call, "func", None) is _async_call


def task_scratchpad(configurable: Mapping[str, Any]) -> TaskScratchpad | None:
    """The running task's scratchpad, or ``None`` outside a graph task. Raises
    :class:`~langgraph_mcp.errors.IncompatibleDependencyError` if LangGraph changed its shape."""
    scratchpad = configurable.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return None
    resume = getattr(scratchpad, "resume", None)
    get_null_resume = getattr(scratchpad, "get_null_resume", None)
    if not isinstance(resume, list) or not callable(get_null_resume):
        raise IncompatibleDependencyError(
            "langgraph",
            LANGGRAPH_VERSION,
            "changed the pregel task scratchpad (expected a 'resume' list and 'get_null_resume'), which "
            "langgraph-mcp reads to match stored elicitation answers; langgraph-mcp supports langgraph 1.2.x",
        )
    return cast(TaskScratchpad, scratchpad)


def stored_resume_values(scratchpad: TaskScratchpad) -> list[Any]:
    """Every resume value of the task in interrupt order, including a fresh one not yet consumed by
    ``interrupt()`` (without consuming it)."""
    values = list(scratchpad.resume)
    fresh = _unconsumed_null_resume(scratchpad)
    if fresh is not None:
        values.append(fresh)
    return values


def _unconsumed_null_resume(scratchpad: TaskScratchpad) -> Any:
    """The plain ``Command(resume=v)`` value while no ``interrupt()`` of the task has taken it yet.

    ``get_null_resume(False)`` keeps returning the value after ``interrupt()`` consumed it (and appended the
    same object to ``resume``), so a consumed one is recognised by identity with the last stored value.
    """
    fresh = scratchpad.get_null_resume(False)
    if fresh is not None and scratchpad.resume and scratchpad.resume[-1] is fresh:
        return None
    return fresh


# ``stream_mode="tools"``: LangGraph's ``StreamToolCallHandler`` keeps, while a tool run is open, a writer for that
# call's ``tool-output-delta`` events on a ContextVar (``ToolRuntime.emit_output_delta`` reads it; it needs a
# ToolRuntime, which an MCP call made by McpToolNode has none of). Fallback: no deltas (the custom events remain).
_ToolCallWriterVar: Any
try:
    from langgraph.pregel._tools import _tool_call_writer as _ToolCallWriterVar
except ImportError:  # pragma: no cover
    _ToolCallWriterVar = None


def _writes_nowhere_reference(chunk: Any) -> None:
    pass


def writes_nowhere(writer: Callable[[Any], None]) -> bool:
    """Whether ``writer`` (from ``get_stream_writer()``) is LangGraph's no-op one: the run streams no custom events
    (``stream_mode`` without ``"custom"``, or a subgraph streamed without ``subgraphs=True``). LangGraph hands every
    task a plain function whose body is ``pass`` then; anything else (a wrapper, a real writer) counts as
    listening."""
    code = getattr(writer, "__code__", None)
    reference = _writes_nowhere_reference.__code__
    return (
        code is not None
        and code.co_code == reference.co_code
        and code.co_consts == reference.co_consts
        and not getattr(writer, "__closure__", None)
    )


def tool_output_writer() -> Callable[[Any], None] | None:
    """The ``tool-output-delta`` writer of the tool run open in this context (``stream_mode="tools"``), or ``None``."""
    if _ToolCallWriterVar is None:
        return None
    return cast("Callable[[Any], None] | None", _ToolCallWriterVar.get())


try:
    from langgraph._internal._constants import CONFIG_KEY_RESUME_MAP
except ImportError:  # pragma: no cover
    CONFIG_KEY_RESUME_MAP = "__pregel_resume_map"

_interrupt_id: Callable[[str, int], str] | None
try:
    from langgraph.types import _interrupt_id
except ImportError:  # pragma: no cover - fallback: fresh map answers are not told apart (see below)
    _interrupt_id = None


def fresh_resume_index(scratchpad: TaskScratchpad, configurable: Mapping[str, Any]) -> int | None:
    """The index (in :func:`stored_resume_values`) of a resume value given by *this* invocation, not yet checked.

    A plain ``Command(resume=v)`` is the null resume (last, not yet in ``resume``). A ``Command(resume={id: v})``
    value is appended to ``resume`` by LangGraph before the task runs, under the interrupt id of the next index
    (or, for older checkpoints, the first one); it is recognised by identity with the map entry. Without
    LangGraph's ``_interrupt_id`` (a future version) map answers are not recognised and ``None`` is returned.
    """
    null = scratchpad.get_null_resume(False)
    if null is not None:  # consumed already (see _unconsumed_null_resume): it sits last in ``resume``
        return (
            len(scratchpad.resume) - 1
            if _unconsumed_null_resume(scratchpad) is None
            else len(scratchpad.resume)
        )
    resume_map = configurable.get(CONFIG_KEY_RESUME_MAP)
    if (
        not isinstance(resume_map, Mapping)
        or not resume_map
        or not scratchpad.resume
        or _interrupt_id is None
    ):
        return None
    last = len(scratchpad.resume) - 1
    ns = str(configurable.get("checkpoint_ns", ""))
    for interrupt_id in (_interrupt_id(ns, last), _interrupt_id(ns, 0)):
        if interrupt_id in resume_map and resume_map[interrupt_id] is scratchpad.resume[last]:
            return last
    return None


try:
    from langgraph._internal._constants import INTERRUPT as INTERRUPT_CHANNEL
except ImportError:  # pragma: no cover
    INTERRUPT_CHANNEL = "__interrupt__"


async def shown_interrupt_value(configurable: Mapping[str, Any], index: int) -> Any:
    """The value of the running task's interrupt number ``index`` as its checkpoint saved it (what the human was
    shown), or ``None`` when it can't be read.

    LangGraph keeps a pending interrupt as a pending write on the channel ``__interrupt__`` of the checkpoint the
    task runs from (one per graph level in ``checkpoint_map``); it is found by its id. Read through the public
    checkpointer API; anything unexpected (another layout, a checkpointer without async reads) gives ``None``.
    """
    checkpointer = configurable.get(CONFIG_KEY_CHECKPOINTER)
    checkpoint_map = configurable.get("checkpoint_map")
    thread_id = configurable.get("thread_id")
    if (
        checkpointer is None
        or not isinstance(checkpoint_map, Mapping)
        or thread_id is None
        or _interrupt_id is None
    ):
        return None
    wanted = _interrupt_id(str(configurable.get("checkpoint_ns", "")), index)
    for graph_ns, checkpoint_id in checkpoint_map.items():
        config: Any = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": graph_ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        try:
            saved = await checkpointer.aget_tuple(config)
        except Exception:  # e.g. NotImplementedError: a sync-only checkpointer
            return None
        for write in (saved.pending_writes or []) if saved is not None else []:
            if len(write) != 3 or write[1] != INTERRUPT_CHANNEL or not isinstance(write[2], list | tuple):
                continue
            for item in write[2]:
                if getattr(item, "id", None) == wanted:
                    return getattr(item, "value", None)
    return None


try:
    from langgraph._internal._constants import RETURN as RETURN_CHANNEL
except ImportError:  # pragma: no cover
    RETURN_CHANNEL = "__return__"


async def kept_task_values(configurable: Mapping[str, Any]) -> list[Any]:
    """What the running task's checkpoint keeps for it so far: the value of every pending interrupt (what a human
    is being shown) and every ``@task`` return value, in the order saved; ``[]`` when it can't be read.

    Both are pending writes of the checkpoint the task runs from (channels ``__interrupt__`` and ``__return__``),
    kept until the step ends, whichever re-run of the node wrote them. Read through the public checkpointer API
    (``aget_tuple``, or ``get_tuple`` for a sync-only checkpointer); anything unexpected gives ``[]``.
    """
    checkpointer = configurable.get(CONFIG_KEY_CHECKPOINTER)
    checkpoint_map = configurable.get("checkpoint_map")
    thread_id = configurable.get("thread_id")
    if checkpointer is None or not isinstance(checkpoint_map, Mapping) or thread_id is None:
        return []
    found: list[Any] = []
    for graph_ns, checkpoint_id in checkpoint_map.items():
        config: Any = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": graph_ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        try:
            saved = await checkpointer.aget_tuple(config)
        except NotImplementedError:  # a sync-only checkpointer
            try:
                saved = await asyncio.to_thread(checkpointer.get_tuple, config)
            except Exception:
                return []
        except Exception:
            return []
        for write in (saved.pending_writes or []) if saved is not None else []:
            if len(write) != 3:
                continue
            if write[1] == RETURN_CHANNEL:
                found.append(write[2])
            elif write[1] == INTERRUPT_CHANNEL and isinstance(write[2], list | tuple):
                found.extend(getattr(item, "value", None) for item in write[2])
    return found


# ================================================================================================= mcp
#
# mcp (checked against 2.3.0; no public equivalent in 2.3):
#
# * ``ClientSession._stamp`` + ``ClientSession._dispatcher.send_raw_request`` — send a request and get its raw
#   result without the SDK validating the whole result against the wire schema (used to read a ``tools/list``
#   page one tool at a time, so one malformed tool does not hide the others). ``send_request`` validates first.
#   Fallback when missing: :func:`send_unvalidated` returns ``None`` and the SDK's validation error stands.
# * ``ClientSession._absorb_tool_listing`` — let the session learn the output schemas of a listing read that way
#   (else its first call to such a tool re-lists, and fails the same validation). Fallback: skipped.
# * httpx2's error text for an SSE event past ``max_event_size`` (``"Server-sent event exceeded the N byte
#   limit."``), which the SDK wraps in ``MCPError(CONNECTION_CLOSED, "SSE stream failed: ...")`` with no code of its
#   own. Fallback when the text changes: the error reads as a lost connection (reconnect), not "result too large".
# * The words of a legacy HTTP 404 for an unknown session: the server's JSON-RPC body (``"Session not found"``, mcp's
#   server) or the SDK's stand-in when the body is not JSON-RPC (``"Session terminated"``); both reach the client as
#   ``MCPError(INVALID_REQUEST)``, and the status code is not exposed. Fallback when the text changes: the call
#   fails with the server's error instead of re-initializing the session.
# * The SDK's words for a streamable-HTTP JSON response body it cannot parse: ``MCPError(PARSE_ERROR, "Failed to
#   parse JSON response: ...")``, synthesized by the client (a server's own -32700 says the *server* could not
#   parse *our* message, so the code alone can't tell). Fallback when the text changes: the SDK's error stands.
#
# Replaced by public API (mcp 2.3): the transport's end-of-stream is no longer read from the session's private
# dispatcher (``_dispatcher._closed``) but from our own wrapper around the public ``mcp.client.Transport``
# (``langgraph_mcp.connection.watch``), and ``mcp.shared._httpx_utils.create_mcp_http_client`` is a plain
# ``httpx2.AsyncClient`` built in ``langgraph_mcp.transports.http.http_client``.


def dependency_version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


MCP_VERSION = dependency_version("mcp")

UNVALIDATED_REQUEST_ATTRIBUTES = ("_stamp", "_dispatcher")
ABSORB_TOOL_LISTING = "_absorb_tool_listing"
SSE_EVENT_TOO_LARGE_WORDS = ("exceeded", "byte limit")


async def send_unvalidated(session: ClientSession, method: str, params: dict[str, Any] | None) -> Any | None:
    """Send ``method`` on ``session`` and return the raw result, unvalidated; ``None`` if this mcp can't."""
    stamp = getattr(session, "_stamp", None)
    dispatcher = getattr(session, "_dispatcher", None)
    send_raw = getattr(dispatcher, "send_raw_request", None)
    if stamp is None or send_raw is None:
        return None
    data: dict[str, Any] = {"method": method, **({"params": params} if params is not None else {})}
    opts: dict[str, Any] = {}
    stamp(data, opts)
    return await send_raw(data["method"], data.get("params"), opts)


def absorb_tool_listing(session: ClientSession, result: types.ListToolsResult, *, complete: bool) -> None:
    """Tell the session about tools listed through :func:`send_unvalidated` (no-op if this mcp can't)."""
    absorb = getattr(session, ABSORB_TOOL_LISTING, None)
    if absorb is not None:
        absorb(result, complete=complete)


def is_sse_event_too_large(error: BaseException) -> bool:
    """Whether an SDK error reports an SSE event past the transport's ``max_sse_event_size``."""
    return (
        isinstance(error, MCPError)
        and error.code == types.CONNECTION_CLOSED
        and all(words in error.message for words in SSE_EVENT_TOO_LARGE_WORDS)
    )


UNPARSEABLE_HTTP_RESPONSE_PREFIX = "Failed to parse JSON response"


def is_unparseable_http_response(error: BaseException) -> bool:
    """Whether an SDK error says the HTTP response to our request was not valid JSON-RPC."""
    return (
        isinstance(error, MCPError)
        and error.code == types.PARSE_ERROR
        and error.message.startswith(UNPARSEABLE_HTTP_RESPONSE_PREFIX)
    )


SESSION_GONE_MESSAGES = ("Session not found", "Session terminated")


def is_session_gone(error: BaseException) -> bool:
    """Whether an SDK error says the server no longer knows this legacy HTTP session (HTTP 404)."""
    return (
        isinstance(error, MCPError)
        and error.code == types.INVALID_REQUEST
        and error.message in SESSION_GONE_MESSAGES
    )


def missing_internals(session: ClientSession) -> list[str]:
    """The private mcp attributes this package uses that ``session`` lacks (empty when all are there)."""
    missing = [
        name for name in (*UNVALIDATED_REQUEST_ATTRIBUTES, ABSORB_TOOL_LISTING) if not hasattr(session, name)
    ]
    if hasattr(session, "_dispatcher") and not hasattr(session._dispatcher, "send_raw_request"):
        missing.append("_dispatcher.send_raw_request")
    return missing


# ------------------------------------------------------------------------------------------------- mcp OAuth
#
# ``OAuthClientProvider`` (mcp 2.3) has no public hook for two steps per-user sign-in in a graph needs
# (``langgraph_mcp.connection.oauth``): ``_initialize`` (loading stored tokens: it restores neither their expiry
# nor the discovered metadata) and ``_perform_authorization_code_grant`` (the redirect and the wait for the code,
# which keeps the PKCE verifier in a local variable). :class:`OAuthProviderHooks` overrides exactly those two and
# hands them to public-named hooks; an mcp without them fails at import, naming the version.

OAUTH_PROVIDER_STEPS = ("_initialize", "_perform_authorization_code_grant")

from mcp.client.auth import OAuthClientProvider  # noqa: E402

if not all(
    callable(getattr(OAuthClientProvider, name, None)) for name in OAUTH_PROVIDER_STEPS
):  # pragma: no cover
    raise IncompatibleDependencyError(
        "mcp",
        MCP_VERSION,
        "OAuthClientProvider has no _initialize / _perform_authorization_code_grant, the steps per-user sign-in "
        "hooks into; langgraph-mcp supports mcp 2.3.x",
    )


class OAuthProviderHooks(OAuthClientProvider):
    """The SDK's provider with its two private steps as hooks: :meth:`loaded` after stored tokens are loaded, and
    :meth:`authorization_code` in place of the redirect-and-wait (:meth:`sdk_authorization_code` runs the SDK's)."""

    async def _initialize(self) -> None:
        await super()._initialize()
        await self.loaded()

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        return await self.authorization_code()

    async def loaded(self) -> None:
        """Called after the SDK loaded the stored tokens and client registration into ``self.context``."""

    async def authorization_code(self) -> tuple[str, str]:
        """The authorization code and its PKCE verifier (default: the SDK's redirect and callback handlers)."""
        return await self.sdk_authorization_code()

    async def sdk_authorization_code(self) -> tuple[str, str]:
        """The SDK's own step: builds the authorization URL, calls the redirect then the callback handler."""
        code, verifier = await super()._perform_authorization_code_grant()
        return code, verifier


# ================================================================================================= httpx2 / httpcore2
#
# httpx2 2.16 has no public way to give its default transport a network backend (``AsyncHTTPTransport`` builds its
# ``httpcore2.AsyncConnectionPool`` itself, without ``network_backend``), and passing our own ``transport=`` turns
# off httpx2's proxies from the environment. So the backend is swapped into the client's default pool:
# ``AsyncClient._transport._pool._network_backend``, before the pool opened any connection (its connections are
# created with the pool's backend). Fallback when that shape is missing: the pool keeps httpcore2's backend — the
# same behaviour, with its costlier check of idle connections.

POOL_BACKEND_PATH = ("_transport", "_pool", "_network_backend")


def wrap_pool_backend(
    client: httpx2.AsyncClient,
    wrap: Callable[[httpcore2.AsyncNetworkBackend], httpcore2.AsyncNetworkBackend],
) -> bool:
    """Give ``client``'s default connection pool the backend ``wrap(its backend)``; ``False`` (nothing changed)
    when this httpx2/httpcore2 is shaped differently or the pool already has connections."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if (
        type(pool) is not httpcore2.AsyncConnectionPool  # not a proxy's pool, nor another transport
        or not isinstance(backend, httpcore2.AsyncNetworkBackend)
        or pool.connections
    ):
        return False
    pool._network_backend = wrap(backend)
    return True
