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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar, cast

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.client.subscriptions import ToolsListChanged
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp import _compat
from langgraph_mcp.backoff import ReconnectBackoff
from langgraph_mcp.config import HttpServer, ServerSpec, StdioServer
from langgraph_mcp.errors import (
    CallInterruptedError,
    CallNotSentError,
    InvalidResponseError,
    ResultTooLargeError,
    ServerConnectionError,
    ServerError,
    ServerUnavailableError,
    ToolCallTimeoutError,
)
from langgraph_mcp.legacy_routing import CallEnd, ElicitReply, LegacyCallRouter, RoutedCall
from langgraph_mcp.server_logs import ServerLogs
from langgraph_mcp.stderr_capture import StderrCapture
from langgraph_mcp.transport import TransportWatch, command_line, make_client

logger = logging.getLogger("langgraph_mcp.connection")

T = TypeVar("T")
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]

# How long an abandoned legacy question may stay unanswered after its call was cancelled before it gets an
# error answer (servers on the TypeScript SDK 1.x don't withdraw a question when its call is cancelled).
ABANDON_GRACE_SECONDS = 1.0
# How long a failed request waits for its dead connection's owner to record why it ended (for the message).
OWNER_REPORT_SECONDS = 2.0
# How long closing a connection waits for its owner task (which stops the server process) to finish.
OWNER_STOP_SECONDS = 10.0


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
    ended: bool = False
    """A final event (done or failed) was queued: later ones are dropped."""
    transport_failed: bool = False
    """The connection's task group cancelled the call: its failure is explained once the owner has the reason."""

    def end(self, event: DoneEvent | FailedEvent) -> None:
        if not self.ended:
            self.ended = True
            self.events.put_nowait(event)

    @property
    def waits_for_human(self) -> bool:
        return self.pending_question is not None and not self.pending_question.reply.done()

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
            if isinstance(event, FailedEvent) and self.transport_failed:
                what = f"the call to {self.tool!r}"
                event = FailedEvent(await self.connection.transport_failed(what, None, tool=self.tool))
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
        self._connected_once = False
        self.backoff = ReconnectBackoff(
            spec.restart_attempts, spec.reconnect_backoff, spec.reconnect_backoff_max
        )
        """When the next (re)connect may run, and how many this outage has used."""
        self._watch: TransportWatch | None = None
        self._stderr: StderrCapture | None = None
        # Requests in flight, each with the way to fail it at once (a bad message from the server).
        self._in_flight: dict[object, Callable[[BaseException], None]] = {}
        self.router = LegacyCallRouter(name, spec.exclusive_tools)
        """Which legacy call a pushed question belongs to, and which calls must run alone."""
        self.closed = False

    # ------------------------------------------------------------------------------------------- lifecycle

    @property
    def started(self) -> bool:
        return self._client is not None

    @property
    def alive(self) -> bool:
        """Connected, and the transport has not reported the server gone."""
        return self._client is not None and not self._transport_ended()

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

    @property
    def last_error(self) -> BaseException | None:
        return self._error

    @property
    def state(self) -> Literal["idle", "connected", "reconnecting", "down", "closed"]:
        """``idle`` (never started), ``connected``, ``reconnecting`` (an outage with restarts left), ``down``
        (restarts used up: waiting out the backoff), or ``closed``."""
        if self.closed:
            return "closed"
        if self.alive:
            return "connected"
        if self.backoff.in_outage:
            return "down" if self.backoff.exhausted or not self._connected_once else "reconnecting"
        return "idle"

    async def client(self) -> Client:
        """The live client, starting or restarting the connection as needed (bounded attempts, with backoff)."""
        if self._client is not None and not self._transport_ended():
            return self._client
        async with self._start_lock:
            if self._client is not None and self._transport_ended():
                # The server went away between calls (e.g. the stdio process died): restart before sending, so
                # even a non-idempotent call is safe — it was never delivered to the dead server.
                self.mark_dead(ServerConnectionError(self.name, "the server closed the connection"))
                await self._wait_owner()
            if self._client is not None:
                return self._client
            if self.closed:
                raise ServerConnectionError(self.name, "the connection was closed (aclose() was called)")
            await self._connect()
            assert self._client is not None
            return self._client

    async def _connect(self) -> None:
        """Start the connection. Within an outage of a connection that was up, restart up to ``restart_attempts``
        times, each after its backoff delay; past that (or for a server that never came up) fail fast until the
        backoff has passed, then try once more."""
        backoff = self.backoff
        while True:
            if backoff.in_outage and (backoff.exhausted or not self._connected_once):
                if (retry_in := backoff.wait_remaining()) > 0:
                    raise self._unavailable(retry_in)
            elif backoff.in_outage:
                await asyncio.sleep(backoff.wait_remaining())
            try:
                await self._start()
            except ServerConnectionError as exc:
                backoff.failed()
                if backoff.exhausted or not self._connected_once:
                    if self._connected_once:
                        raise ServerConnectionError(
                            self.name,
                            f"gave up after {backoff.attempts} restart attempts; last error: {exc.detail}",
                        ) from exc.__cause__
                    raise
                continue
            backoff.succeeded()
            self._connected_once = True
            return

    def _unavailable(self, retry_in: float) -> ServerUnavailableError:
        why = _describe(self._error)
        if self._connected_once:
            what = f"gave up after {self.backoff.attempts} restart attempts (last error: {why})"
        else:
            what = why
        return ServerUnavailableError(
            self.name, f"unavailable: {what}; next attempt in {retry_in:.1f}s", retry_in=retry_in
        )

    def _transport_ended(self) -> bool:
        return self._watch is not None and self._watch.ended

    async def _start(self) -> None:
        # A dead connection's owner may still be shutting its server down: let it finish first, so two owners
        # never share this object's state (the old one's cleanup would clear the new client) and no process leaks.
        await self._wait_owner()
        self._starts += 1
        self.router.new_session()
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._error = None
        self._watch = TransportWatch(self.name, self._on_invalid_message)
        self._owner = asyncio.get_running_loop().create_task(self._own(), name=f"mcp-owner:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready.wait()), self.spec.connect_timeout)
        except TimeoutError:
            self._stop.set()
            await self._wait_owner()
            error = self._error
            detail = f"did not connect within {self.spec.connect_timeout:g}s"
            if isinstance(error, InvalidResponseError):
                detail += f" ({error.detail})"
            self._error = ServerConnectionError(self.name, detail)
            raise self._error from None
        if self._client is None:
            cause = self._error
            await self._wait_owner()
            failure = ServerConnectionError(
                self.name, f"could not connect: {_describe(cause)}" + self._stdio_context()
            )
            self._error = failure
            raise failure from cause

    def _stdio_context(self) -> str:
        """For a stdio server that did not come up: its command line and the last lines it wrote to stderr."""
        if not isinstance(self.spec, StdioServer):
            return ""
        text = f"; command: {command_line(self.spec)}"
        lines = self._stderr.tail() if self._stderr is not None else []
        if lines:
            text += "; its stderr ended with:\n    " + "\n    ".join(lines)
        elif self._stderr is not None:
            text += "; it wrote nothing to stderr"
        return text

    async def _own(self) -> None:
        assert self._stop is not None and self._ready is not None and self._watch is not None
        stderr = StderrCapture(self.name, self.spec.stderr) if isinstance(self.spec, StdioServer) else None
        self._stderr = stderr
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
            leaf = flatten_exception(exc)
            if self._error is None or not isinstance(leaf, asyncio.CancelledError):
                self._error = leaf
            if not isinstance(leaf, asyncio.CancelledError):
                logger.debug("MCP server %r connection ended: %r", self.name, leaf)
            task = asyncio.current_task()
            if isinstance(leaf, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the owner task itself is being cancelled (loop shutdown): never swallow that
        finally:
            if self._owner is asyncio.current_task():  # never clear a newer owner's state
                self._client = None
                self._task_group = None
                self._ready.set()
            if stderr is not None:
                stderr.close()

    async def _watch_tool_changes(self, client: Client) -> None:
        """2026-07-28 servers announce tool-list changes only on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged) and self._on_tools_changed is not None:
                        self._on_tools_changed(self.name)
        except Exception as exc:  # a lost or refused subscription only costs freshness, never a call
            logger.debug("MCP server %r: tool-change subscription ended: %r", self.name, exc)

    def _make_client(self, stderr: StderrCapture | None) -> Client:
        spec = self.spec
        assert self._watch is not None
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
        writer = cast(TextIO, stderr.writer) if stderr is not None else None
        return make_client(spec, self._watch, stderr=writer, common=common)

    async def _wait_owner(self, timeout: float = OWNER_STOP_SECONDS) -> None:
        """Wait (bounded) for the owner task to finish; a cancellation of *this* caller still propagates."""
        owner = self._owner
        if owner is None or owner.done():
            return
        done, _ = await asyncio.wait([owner], timeout=timeout)
        if not done:
            logger.warning("MCP server %r: its connection did not stop within %gs", self.name, timeout)

    def mark_dead(self, error: BaseException, client: Client | None = None) -> None:
        """The transport failed: stop the owner so the next call reconnects (once per death).

        ``client``: the client the failure was seen on; a late failure of an older client is ignored.
        """
        if self._client is None or (client is not None and client is not self._client):
            return
        self._error = error
        self.backoff.failed()
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

    # ------------------------------------------------------------------------------------------- failures

    async def transport_failed(
        self, what: str, client: Client | None, *, tool: str | None = None
    ) -> ServerError:
        """The error for a request cancelled by the connection's own task group: the transport failed under it
        (e.g. an HTTP response cut mid-body). The reason is what the owner records as the client exits."""
        if client is not None:
            self.mark_dead(ServerConnectionError(self.name, "the transport failed"), client)
        await self._wait_owner(OWNER_REPORT_SECONDS)
        return self._lost(what, self._error, tool=tool)

    def _lost(self, what: str, cause: BaseException | None, *, tool: str | None) -> ServerError:
        """The error for a request whose connection failed under it."""
        detail = f"connection lost during {what} ({_describe(cause)})"
        if tool is not None:
            error: ServerError = CallInterruptedError(
                self.name, detail + "; the call may or may not have run on the server", tool=tool
            )
        else:
            error = ServerConnectionError(self.name, detail)
        error.__cause__ = cause
        return error

    def _too_large(self, error: BaseException, tool: str | None) -> ResultTooLargeError | None:
        if _compat.is_sse_event_too_large(error):
            return ResultTooLargeError(self.name, None, self.spec.max_result_bytes, tool=tool)
        return None

    def _on_invalid_message(self, error: Exception) -> None:
        """The server sent something that looks like JSON-RPC but cannot be parsed: whatever request it answered
        would wait forever, so every request in flight (except calls waiting for a human) fails at once."""
        failure = InvalidResponseError(
            self.name,
            f"the server sent an invalid response: a message the MCP SDK cannot parse ({_first_error(error)})",
        )
        failure.__cause__ = error
        self._error = failure
        for fail in list(self._in_flight.values()):
            fail(failure)

    # ------------------------------------------------------------------------------------------- requests

    async def request(
        self, make: Callable[[Client], Awaitable[T]], *, timeout: float, what: str = "a request"
    ) -> T:
        """Run one request as a job of the owner task; a finite timeout always applies.

        A transport failure is always a :class:`ServerConnectionError` for the caller, never a cancellation.
        """
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
                except asyncio.CancelledError:
                    if not outcome.done():
                        outcome.cancel()
                    raise
                except BaseException as exc:
                    if not outcome.done():
                        outcome.set_exception(_unwrap_for_caller(exc))
                else:
                    if not outcome.done():
                        outcome.set_result(value)

        def fail(error: BaseException) -> None:
            if not outcome.done():
                outcome.set_exception(error)
            scope.cancel()

        key = object()
        self._in_flight[key] = fail
        tg.start_soon(job)
        try:
            done, _ = await asyncio.wait([outcome], timeout=timeout)
        finally:
            self._in_flight.pop(key, None)
        if not done:
            scope.cancel()
            # Nobody waits for the cancelled job's outcome any more; don't let asyncio log it as never retrieved.
            outcome.add_done_callback(lambda f: f.cancelled() or f.exception())
            raise TimeoutError(f"MCP server {self.name!r} did not answer within {timeout:g}s")
        if outcome.cancelled():  # the job was cancelled by the connection's task group, not by this caller
            raise await self.transport_failed(what, client)
        try:
            return outcome.result()
        except ServerError:
            raise
        except Exception as exc:
            if (too_large := self._too_large(exc, None)) is not None:
                raise too_large from exc
            if (gone := self._session_gone(exc, client, None)) is not None:
                raise gone from exc
            if is_connection_lost(exc):
                self.mark_dead(exc, client)
                raise self._lost(what, exc, tool=None) from exc
            raise

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
        if tg is None or client is not self._client:  # the connection died while the call waited for its turn
            self.end_legacy_call(handle, "unsent")
            raise CallNotSentError(
                self.name,
                f"connection lost before calling {tool!r} ({_describe(self._error)}); it was not sent",
                tool=tool,
            )
        # Legacy calls may wait for a human inside an elicitation: the per-event timeout in next_event bounds the
        # server's work, and the park timeout bounds the human's, so the SDK-level timeout only has to cover both.
        spec = self.spec
        read_timeout = spec.tool_timeout + spec.park_timeout + 5 if self.is_legacy else spec.tool_timeout + 5

        key = object()

        def fail(error: BaseException) -> None:
            if not handle.waits_for_human:
                handle.end(FailedEvent(error))
                if handle.scope is not None:
                    handle.scope.cancel()

        async def job() -> None:
            if handle.route is not None:
                self.router.enter(handle.route)
            try:
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
                    except asyncio.CancelledError:
                        self.end_legacy_call(handle, "unsettled")
                        if not scope.cancel_called:  # not our own abandon or timeout: the transport failed
                            handle.transport_failed = True
                            self.mark_dead(ServerConnectionError(self.name, "the transport failed"), client)
                            handle.end(FailedEvent(ServerConnectionError(self.name, "the transport failed")))
                        raise
                    except BaseException as exc:
                        error = self._call_error(tool, exc, client)
                        # An error response means the server finished the request; a lost or timed-out one doesn't.
                        answered = isinstance(error, MCPError) and error.code not in _UNANSWERED_CODES
                        self.end_legacy_call(handle, "server" if answered else "unsettled")
                        handle.end(FailedEvent(error))
                    else:
                        self.end_legacy_call(handle, "server")
                        handle.end(DoneEvent(result))
                if scope.cancelled_caught:
                    handle.end(
                        FailedEvent(ServerConnectionError(self.name, f"call {tool!r} cancelled", tool=tool))
                    )
            finally:
                self._in_flight.pop(key, None)

        self._in_flight[key] = fail
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
            error = self._call_error(tool, exc, client)
            if error is exc:
                raise
            raise error from exc

    def _call_error(self, tool: str, exc: BaseException, client: Client) -> BaseException:
        """What the caller of ``tool`` sees for ``exc``; a lost transport marks the connection dead."""
        error = _unwrap_for_caller(exc)
        if isinstance(error, ServerError):
            return error
        if (too_large := self._too_large(error, tool)) is not None:
            return too_large
        if (gone := self._session_gone(error, client, tool)) is not None:
            return gone
        if is_connection_lost(error):
            self.mark_dead(error, client)
            return self._lost(f"the call to {tool!r}", error, tool=tool)
        return error

    def _session_gone(
        self, error: BaseException, client: Client, tool: str | None
    ) -> CallNotSentError | None:
        """A legacy HTTP 404 for our session (the server restarted or expired it): re-initialize on the next
        request. The server refused the request before running it, so the caller may send it again (any tool)."""
        if not (_compat.is_session_gone(error) and isinstance(self.spec, HttpServer)):
            return None
        self.mark_dead(error, client)
        what = f"the call to {tool!r} was not run" if tool is not None else "the request was not run"
        lost = CallNotSentError(
            self.name,
            f"the server no longer knows this session (restarted?); {what}; the session is re-initialized",
            tool=tool,
        )
        lost.__cause__ = error
        return lost

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
        return roots_result(self.spec.roots)

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, Exception):  # the transport watch takes parse failures out of the flow first
            self._on_invalid_message(message)
            return
        if isinstance(message, types.ToolListChangedNotification) and self._on_tools_changed is not None:
            self._on_tools_changed(self.name)


def roots_result(roots: list[str] | None) -> types.ListRootsResult:
    """The answer to ``roots/list`` in both eras: each configured root as a URI, a path resolved to an absolute
    ``file://`` URI (relative paths against the current directory), a URI as given."""
    return types.ListRootsResult(
        roots=[types.Root(uri=r if "://" in r else Path(r).resolve().as_uri()) for r in roots or []]  # type: ignore[arg-type]
    )


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
    if isinstance(error, ServerError):
        return error.detail
    if isinstance(error, FileNotFoundError):
        return f"command not found ({error.filename or error})"
    if isinstance(error, MCPError):
        return f"MCP error {error.code}: {error.message}"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"


def _first_error(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            return str(first.get("msg", error))[:300]
    return f"{type(error).__name__}: {error}"[:300]


EraName = Literal["modern", "legacy"]


def era_of(version: str | None) -> EraName | None:
    if version is None:
        return None
    return "legacy" if version in HANDSHAKE_PROTOCOL_VERSIONS else "modern"
