"""One live MCP server connection in one event loop: an owner task holds the ``mcp.Client``; calls come from anywhere.

Why an owner task: anyio requires a ``Client`` to be entered and exited by the same task, and any exception that
leaves ``async with Client`` comes out wrapped in an ``ExceptionGroup`` — which would turn a LangGraph interrupt
into a crash. So no caller ever runs inside the ``async with``: the owner enters it, runs every request as a job in
its own task group, and hands results and server questions back through a :class:`CallHandle`.

A call's job belongs to the connection, not to the caller, so a legacy call that is waiting for a human's answer
can stay open ("parked") after the graph node that started it has been interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, TextIO, TypeVar, cast

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp.config import HttpServer, InProcessServer, ServerSpec, SseServer, StdioServer
from langgraph_mcp.errors import ServerConnectionError, ToolCallTimeoutError
from langgraph_mcp.legacy_routing import CallEnd, ElicitReply, LegacyCallRouter, RoutedCall
from langgraph_mcp.server_logs import ServerLogs

logger = logging.getLogger("langgraph_mcp.connection")

T = TypeVar("T")
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]

# How long an abandoned legacy question may stay unanswered after its call was cancelled before it gets an
# error answer (servers on the TypeScript SDK 1.x don't withdraw a question when its call is cancelled).
ABANDON_GRACE_SECONDS = 1.0
# How long a request still waits for its answer after the server sent a line the SDK could not parse.
PROTOCOL_ERROR_GRACE_SECONDS = 0.5


_UNANSWERED_CODES = (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT)


def flatten_exception(exc: BaseException) -> BaseException:
    """The first leaf of a (nested) ``ExceptionGroup``, or ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def is_connection_lost(exc: BaseException) -> bool:
    exc = flatten_exception(exc)
    if isinstance(exc, TimeoutError):  # an OSError subclass, but a slow server is not a lost connection
        return False
    if isinstance(exc, MCPError):
        return exc.code == types.CONNECTION_CLOSED
    return isinstance(
        exc,
        anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream
        | httpx2.TransportError
        | OSError,
    )


@dataclass
class ElicitEvent:
    """A legacy server pushed ``elicitation/create`` for this call; answer with :meth:`CallHandle.reply`."""

    params: types.ElicitRequestParams
    reply: asyncio.Future[ElicitReply]


@dataclass
class DoneEvent:
    result: types.CallToolResult | types.InputRequiredResult


@dataclass
class FailedEvent:
    error: BaseException


CallEvent = ElicitEvent | DoneEvent | FailedEvent


@dataclass(eq=False)
class CallHandle:
    """One in-flight ``tools/call``, running as a job of the connection's owner task."""

    connection: ServerConnection
    tool: str
    events: asyncio.Queue[CallEvent] = field(default_factory=asyncio.Queue)
    scope: anyio.CancelScope | None = None
    finished: bool = False
    pending_question: ElicitEvent | None = None
    route: RoutedCall | None = None
    """Legacy: the call as the connection's router sees it (its turn, the questions routed to it)."""

    async def next_event(self, timeout: float) -> CallEvent:
        """Wait for the server's next move; cancel the call and raise ``ToolCallTimeoutError`` after ``timeout``."""
        try:
            async with asyncio.timeout(timeout):  # not wait_for: on 3.11 it wraps the get in one more task
                event = await self.events.get()
        except TimeoutError:
            await self.abandon()
            raise ToolCallTimeoutError(self.connection.name, self.tool, timeout) from None
        if isinstance(event, ElicitEvent):
            self.pending_question = event
        elif isinstance(event, DoneEvent | FailedEvent):
            self.finished = True
        return event

    async def deliver(self, params: types.ElicitRequestParams) -> ElicitReply:
        """A question the router attributed to this call: queue it for the driver and wait for the answer."""
        reply: asyncio.Future[ElicitReply] = asyncio.get_running_loop().create_future()
        self.events.put_nowait(ElicitEvent(params, reply))
        return await reply

    def reply(self, answer: ElicitReply) -> None:
        question, self.pending_question = self.pending_question, None
        if question is not None and not question.reply.done():
            question.reply.set_result(answer)

    async def abandon(self) -> None:
        """End the call: cancel its request (the SDK sends ``notifications/cancelled``), then, after a short grace,
        answer a still-open question with an error. Never answers "cancel" on the user's behalf."""
        if self.finished:
            return
        self.finished = True
        if self.scope is not None:
            self.scope.cancel()
        question = self.pending_question
        if question is not None and not question.reply.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(question.reply), ABANDON_GRACE_SECONDS)
            if not question.reply.done():
                question.reply.set_result(
                    types.ErrorData(code=types.INTERNAL_ERROR, message="The client abandoned this tool call.")
                )
        self.connection.end_legacy_call(self, "unsettled")


class ServerConnection:
    """A connection to one MCP server, bound to the event loop it was started in."""

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        *,
        on_tools_changed: Callable[[str], None] | None = None,
    ) -> None:
        self.name = name
        self.spec = spec
        self._on_tools_changed = on_tools_changed
        self.logs = ServerLogs(name)
        """The server's log messages (see :mod:`langgraph_mcp.server_logs`)."""
        self._client: Client | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Event | None = None
        self._start_lock = asyncio.Lock()
        self._error: BaseException | None = None
        self._starts = 0
        self._failures_in_a_row = 0
        self._stderr_pipe: tuple[int, IO[str]] | None = None
        self.router = LegacyCallRouter(name, spec.exclusive_tools)
        """Which legacy call a pushed question belongs to, and which calls must run alone."""
        self._protocol_error: BaseException | None = None
        self._protocol_error_event = asyncio.Event()
        self.closed = False

    # ------------------------------------------------------------------------------------------- lifecycle

    @property
    def started(self) -> bool:
        return self._client is not None

    @property
    def alive(self) -> bool:
        """Connected, and the transport has not reported the server gone."""
        return self._client is not None and not self._transport_closed()

    @property
    def protocol_version(self) -> str | None:
        return self._client.protocol_version if self._client is not None else None

    @property
    def is_legacy(self) -> bool:
        version = self.protocol_version
        return version is not None and version in HANDSHAKE_PROTOCOL_VERSIONS

    @property
    def server_info(self) -> types.Implementation | None:
        return self._client.server_info if self._client is not None else None

    @property
    def starts(self) -> int:
        """How many times this connection was (re)started."""
        return self._starts

    async def client(self) -> Client:
        """The live client, starting or restarting the connection as needed (bounded attempts)."""
        if self._client is not None and not self._transport_closed():
            return self._client
        async with self._start_lock:
            if self._client is not None and self._transport_closed():
                # The server went away between calls (e.g. the stdio process died): restart before sending, so
                # even a non-idempotent call is safe — it was never delivered to the dead server.
                self.mark_dead(ServerConnectionError(self.name, "the server closed the connection"))
                await self._wait_owner()
            if self._client is not None:
                return self._client
            if self.closed:
                raise ServerConnectionError(self.name, "the connection was closed (aclose() was called)")
            if self._starts > 0 and self._failures_in_a_row > self.spec.restart_attempts:
                raise ServerConnectionError(
                    self.name,
                    f"gave up after {self.spec.restart_attempts} restart attempts; last error: {self._error!r}",
                )
            await self._start()
            assert self._client is not None
            return self._client

    def _transport_closed(self) -> bool:
        client = self._client
        session = getattr(client, "_session", None)
        # The SDK's JSON-RPC dispatcher flags EOF on the transport; it has no public accessor for it.
        return bool(getattr(getattr(session, "_dispatcher", None), "_closed", False))

    async def _start(self) -> None:
        # A dead connection's owner may still be shutting its server down: let it finish first, so two owners
        # never share this object's state (the old one's cleanup would clear the new client) and no process leaks.
        await self._wait_owner()
        self._starts += 1
        self.router.new_session()
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._error = None
        self._protocol_error = None
        self._protocol_error_event = asyncio.Event()
        self._owner = asyncio.get_running_loop().create_task(self._own(), name=f"mcp-owner:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready.wait()), self.spec.connect_timeout)
        except TimeoutError:
            self._stop.set()
            await self._wait_owner()
            self._failures_in_a_row += 1
            detail = f" (the server sent a message that cannot be parsed: {self._protocol_error})"
            raise ServerConnectionError(
                self.name,
                f"did not connect within {self.spec.connect_timeout:g}s"
                + (detail if self._protocol_error else ""),
            ) from None
        if self._client is None:
            self._failures_in_a_row += 1
            error = self._error
            raise ServerConnectionError(self.name, f"could not connect: {_describe(error)}") from error
        self._failures_in_a_row = 0

    async def _own(self) -> None:
        assert self._stop is not None and self._ready is not None
        stderr = self._open_stderr()
        try:
            async with self._make_client(stderr) as client, anyio.create_task_group() as tg:
                if self.spec.mode == "modern" and client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
                    raise ServerConnectionError(
                        self.name,
                        f"negotiated {client.protocol_version}, but mode='modern' requires 2026-07-28; "
                        "use mode='auto' or 'legacy' for this server",
                    )
                await self.logs.ask_for_level(client, self.spec.log_level)
                self._client = client
                self._task_group = tg
                if self._on_tools_changed is not None and _announces_tool_changes(client):
                    tg.start_soon(self._watch_tool_changes, client)
                self._ready.set()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        except BaseException as exc:  # the owner must never crash the loop; the error is reported to callers
            self._error = flatten_exception(exc)
            if not isinstance(self._error, asyncio.CancelledError):
                logger.debug("MCP server %r connection ended: %r", self.name, self._error)
        finally:
            if self._owner is asyncio.current_task():  # never clear a newer owner's state
                self._client = None
                self._task_group = None
                self._ready.set()
            self._close_stderr(stderr)

    async def _watch_tool_changes(self, client: Client) -> None:
        """2026-07-28 servers announce tool-list changes only on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged) and self._on_tools_changed is not None:
                        self._on_tools_changed(self.name)
        except Exception as exc:  # a lost or refused subscription only costs freshness, never a call
            logger.debug("MCP server %r: tool-change subscription ended: %r", self.name, exc)

    def _make_client(self, stderr: IO[str] | None) -> Client:
        spec = self.spec
        common: dict[str, Any] = {
            # "modern" still probes (server/discover) rather than pinning the version: the probe waits for the
            # server to be up within connect_timeout and brings its real capabilities; legacy-only is refused.
            "mode": "auto" if spec.mode == "modern" else spec.mode,
            "elicitation_callback": self._on_elicit,
            "message_handler": self._on_message,
            "logging_callback": self.logs.on_message,
            "log_level": spec.log_level,
            "client_info": types.Implementation(name="langgraph-mcp", version="0.1.0"),
        }
        if spec.roots is not None:
            common["list_roots_callback"] = self._on_list_roots
        if isinstance(spec, StdioServer):
            params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env, cwd=spec.cwd)
            transport = stdio_client(params, errlog=cast(TextIO, stderr)) if stderr else stdio_client(params)
            return Client(transport, **common)
        if isinstance(spec, HttpServer):
            http = create_mcp_http_client(
                headers=spec.headers or None,
                timeout=httpx2.Timeout(spec.timeout, read=spec.read_timeout),
                auth=spec.auth,
            )
            return Client(streamable_http_client(spec.url, http_client=http), **common)
        if isinstance(spec, SseServer):
            transport = sse_client(
                spec.url,
                headers=spec.headers or None,
                timeout=spec.timeout,
                sse_read_timeout=spec.sse_read_timeout,
            )
            return Client(transport, **common)
        assert isinstance(spec, InProcessServer)
        return Client(spec.server, **common)

    def _open_stderr(self) -> IO[str] | None:
        if not isinstance(self.spec, StdioServer):
            return None
        if self.spec.stderr != "log":
            return Path(self.spec.stderr).open("a")
        read_fd, write_fd = os.pipe()
        server_logger = logging.getLogger(f"langgraph_mcp.server.{self.name}")

        def pump() -> None:
            with os.fdopen(read_fd, errors="replace") as lines:
                for line in lines:
                    server_logger.info("%s", line.rstrip("\n"))

        threading.Thread(target=pump, name=f"mcp-stderr:{self.name}", daemon=True).start()
        return os.fdopen(write_fd, "w")

    @staticmethod
    def _close_stderr(stderr: IO[str] | None) -> None:
        if stderr is not None:
            with contextlib.suppress(OSError):
                stderr.close()

    async def _wait_owner(self) -> None:
        owner = self._owner
        if owner is not None and not owner.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(owner), 10)

    def mark_dead(self, error: BaseException) -> None:
        """The transport failed: stop the owner so the next call reconnects."""
        self._error = error
        self._failures_in_a_row += 1
        if self._stop is not None:
            self._stop.set()
        self._client = None

    async def close(self) -> None:
        """End the connection: cancel every job (parked calls too), exit the client in its owner task, stop the
        subprocess."""
        self.closed = True
        if self._stop is not None:
            self._stop.set()
        await self._wait_owner()

    # ------------------------------------------------------------------------------------------- requests

    async def request(self, make: Callable[[Client], Awaitable[T]], *, timeout: float) -> T:
        """Run one request as a job of the owner task; a finite timeout always applies."""
        client = await self.client()
        tg = self._task_group
        assert tg is not None
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[T] = loop.create_future()
        scope = anyio.CancelScope()

        async def job() -> None:
            with scope:
                try:
                    value = await make(client)
                except BaseException as exc:
                    if not outcome.done():
                        outcome.set_exception(_unwrap_for_caller(exc))
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                else:
                    if not outcome.done():
                        outcome.set_result(value)
            if not outcome.done():
                outcome.set_exception(ServerConnectionError(self.name, "the request was cancelled"))

        tg.start_soon(job)
        deadline = loop.time() + timeout
        # Only a message that can't be parsed *while this request is in flight* may be its answer.
        protocol_error = self._protocol_error_event
        watcher: asyncio.Future[Any] = loop.create_task(protocol_error.wait())
        waiters: list[asyncio.Future[Any]] = [outcome, watcher]
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if outcome not in done and watcher in done:
                # It may also be stray output (a banner printed on stdout): give the real answer a moment.
                grace = min(PROTOCOL_ERROR_GRACE_SECONDS, max(0.0, deadline - loop.time()))
                done, _ = await asyncio.wait(waiters[:1], timeout=grace)
        finally:
            watcher.cancel()
        if outcome in done:
            try:
                return outcome.result()
            except BaseException as exc:
                if is_connection_lost(exc):
                    self.mark_dead(exc)
                raise
        scope.cancel()
        # Nobody waits for the cancelled job's outcome any more; don't let asyncio log it as never retrieved.
        outcome.add_done_callback(lambda f: f.cancelled() or f.exception())
        if protocol_error.is_set() and self._protocol_error is not None:
            raise ServerConnectionError(
                self.name, f"sent a message the MCP SDK cannot parse: {self._protocol_error}"
            ) from self._protocol_error
        raise TimeoutError(f"MCP server {self.name!r} did not answer within {timeout:g}s")

    async def start_call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        input_responses: dict[str, Any] | None = None,
        request_state: str | None = None,
    ) -> CallHandle:
        """Start a ``tools/call`` as a job of the owner task and return its handle (events arrive on it)."""
        client = await self.client()
        handle = CallHandle(self, tool)
        if self.is_legacy:
            handle.route = await self.router.begin(tool, handle.deliver)
        tg = self._task_group
        if tg is None:  # the connection died while the call waited for its turn
            self.end_legacy_call(handle, "unsent")
            raise ServerConnectionError(
                self.name, f"connection lost before calling {tool!r}: {self._error!r}"
            )
        # Legacy calls may wait for a human inside an elicitation: the per-event timeout in next_event bounds the
        # server's work, and the park timeout bounds the human's, so the SDK-level timeout only has to cover both.
        spec = self.spec
        read_timeout = spec.tool_timeout + spec.park_timeout + 5 if self.is_legacy else spec.tool_timeout + 5

        async def job() -> None:
            if handle.route is not None:
                self.router.enter(handle.route)
            with anyio.CancelScope() as scope:
                handle.scope = scope
                try:
                    result = await client.session.call_tool(
                        tool,
                        arguments,
                        read_timeout_seconds=read_timeout,
                        progress_callback=cast(Any, progress),
                        input_responses=cast(Any, input_responses),
                        request_state=request_state,
                        allow_input_required=True,
                    )
                except BaseException as exc:
                    error = self._call_error(tool, exc)
                    # An error response means the server finished the request; a lost or timed-out one doesn't.
                    answered = isinstance(error, MCPError) and error.code not in _UNANSWERED_CODES
                    self.end_legacy_call(handle, "server" if answered else "unsettled")
                    handle.events.put_nowait(FailedEvent(error))
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                else:
                    self.end_legacy_call(handle, "server")
                    handle.events.put_nowait(DoneEvent(result))
            if scope.cancelled_caught:
                handle.events.put_nowait(
                    FailedEvent(ServerConnectionError(self.name, f"call {tool!r} cancelled"))
                )

        tg.start_soon(job)
        return handle

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        input_responses: dict[str, Any] | None = None,
        request_state: str | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """One ``tools/call`` awaited in the caller's own task, for calls that can't pause inside the server
        (2026-07-28: questions come back as an ``InputRequiredResult``). No owner job and no event queue: those hops
        made a call cost ~1.1x the raw SDK call; a lost transport still fails the SDK request at once."""
        client = await self.client()
        timeout = self.spec.tool_timeout
        try:
            async with asyncio.timeout(timeout):
                return await client.session.call_tool(
                    tool,
                    arguments,
                    read_timeout_seconds=timeout + 5,
                    progress_callback=cast(Any, progress),
                    input_responses=cast(Any, input_responses),
                    request_state=request_state,
                    allow_input_required=True,
                )
        except TimeoutError:  # asyncio.timeout cancelled the request: the SDK sent notifications/cancelled
            raise ToolCallTimeoutError(self.name, tool, timeout) from None
        except Exception as exc:
            error = self._call_error(tool, exc)
            if error is exc:
                raise
            raise error from exc

    def _call_error(self, tool: str, exc: BaseException) -> BaseException:
        """What the caller of ``tool`` sees for ``exc``; a lost transport marks the connection dead."""
        error = _unwrap_for_caller(exc)
        if is_connection_lost(error):
            self.mark_dead(error)
            if not isinstance(error, ServerConnectionError):  # say which server and call
                lost = ServerConnectionError(
                    self.name, f"connection lost during the call to {tool!r} ({_describe(error)})"
                )
                lost.__cause__ = error
                error = lost
        return error

    def pause_legacy_call(self, handle: CallHandle) -> None:
        """The call is parked inside its question: other calls may run meanwhile."""
        if handle.route is not None:
            self.router.pause(handle.route)

    async def resume_legacy_call(self, handle: CallHandle) -> None:
        """A parked call is about to get its answer: wait for its turn again."""
        if handle.route is not None:
            await self.router.resume(handle.route)

    def end_legacy_call(self, handle: CallHandle, how: CallEnd) -> None:
        if handle.route is not None:
            self.router.end(handle.route, how)

    def spawn(self, coro: Awaitable[None]) -> None:
        """Run ``coro`` as a background job of the owner task (cancelled with the connection)."""
        tg = self._task_group

        async def run() -> None:
            await coro

        if tg is not None:
            tg.start_soon(run)
        else:
            asyncio.get_running_loop().create_task(run())

    # ------------------------------------------------------------------------------------------- callbacks

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> ElicitReply:
        return await self.router.route(params)

    async def _on_list_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        roots = self.spec.roots or []
        return types.ListRootsResult(
            roots=[types.Root(uri=r if "://" in r else Path(r).resolve().as_uri()) for r in roots]  # type: ignore[arg-type]
        )

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, Exception):
            # The SDK could not parse something the server sent (e.g. JSON nested past pydantic-core's limit).
            # The request it answered would otherwise wait forever: wake every waiter with this error.
            # A fresh event for later requests: one stray line must not fail every request after it.
            self._protocol_error = message
            event, self._protocol_error_event = self._protocol_error_event, asyncio.Event()
            event.set()
            return
        if isinstance(message, types.ToolListChangedNotification) and self._on_tools_changed is not None:
            self._on_tools_changed(self.name)


def _announces_tool_changes(client: Client) -> bool:
    if client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        return False  # legacy servers push notifications/tools/list_changed to the message handler
    tools = client.server_capabilities.tools if client.server_capabilities else None
    return bool(tools and tools.list_changed)


def _unwrap_for_caller(exc: BaseException) -> BaseException:
    leaf = flatten_exception(exc)
    return leaf if isinstance(leaf, Exception) else exc


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    if isinstance(error, ServerConnectionError):
        return str(error).split(": ", 1)[-1]
    if isinstance(error, FileNotFoundError):
        return f"command not found ({error.filename or error})"
    if isinstance(error, MCPError):
        return f"MCP error {error.code}: {error.message}"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"


EraName = Literal["modern", "legacy"]


def era_of(version: str | None) -> EraName | None:
    if version is None:
        return None
    return "legacy" if version in HANDSHAKE_PROTOCOL_VERSIONS else "modern"
