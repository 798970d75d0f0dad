"""The requests of one MCP server connection in one event loop: calls come from anywhere.

:class:`~langgraph_mcp.connection.owner.ClientOwner` keeps the ``mcp.Client`` alive in its owner task; a
:class:`ServerConnection` runs a modern call in the caller's own task, a legacy call in a task of the session
(:mod:`~langgraph_mcp.connection.calls`) that hands results and server questions back through a :class:`CallHandle`, and
turns every failure under a request into one of our errors (a transport failure is never a bare cancellation). A
legacy call's task belongs to the connection, not to the caller, so a call that is waiting for a human's answer can
stay open ("parked") after the graph node that started it has been interrupted.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import mcp.types as types
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.client.session import ClientSession
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.failures import FailureReader, describe_error
from langgraph_mcp.connection.legacy_routing import CallEnd, ElicitReply, LegacyCallRouter, RoutedCall
from langgraph_mcp.connection.logs import ServerLogs
from langgraph_mcp.connection.owner import (
    ClientOwner,
    ListChanged,
    ListKind,
)
from langgraph_mcp.connection.requests import RequestJobs
from langgraph_mcp.connection.tasks import TaskCreated, TasksExtension, offers_tasks
from langgraph_mcp.connection.timers import EventDeadlines, deadline
from langgraph_mcp.connection.transport import legacy_call_slots
from langgraph_mcp.errors import (
    CallNotSentError,
    InvalidResponseError,
    ServerConnectionError,
    ToolCallTimeoutError,
)

logger = logging.getLogger("langgraph_mcp.connection")

T = TypeVar("T")
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]

# How long an abandoned legacy question may stay unanswered after its call was cancelled before it gets an
# error answer (servers on the TypeScript SDK 1.x don't withdraw a question when its call is cancelled).
ABANDON_GRACE_SECONDS = 1.0


_UNANSWERED_CODES = (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT)
_LIST_CHANGED: dict[type, ListKind] = {
    types.ToolListChangedNotification: "tools",
    types.ResourceListChangedNotification: "resources",
    types.PromptListChangedNotification: "prompts",
}
"""The legacy-era notifications that say a listing changed."""


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


class CallEvents:
    """The events of one call, for its one reader (:meth:`CallHandle.next_event`): an ``asyncio.Queue`` without the
    parts one writer and one reader don't need (its getter and putter queues, its join event), read on every call."""

    __slots__ = ("_items", "_reader")

    def __init__(self) -> None:
        self._items: collections.deque[CallEvent] = collections.deque()
        self._reader: asyncio.Future[None] | None = None

    def put(self, event: CallEvent) -> None:
        self._items.append(event)
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    async def get(self) -> CallEvent:
        """The next event, once there is one (a cancelled wait loses none)."""
        while not self._items:
            self._reader = asyncio.get_running_loop().create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        return self._items.popleft()


_WAKE_UP: Any = object()
"""Queued on a call's events when its wait for the next one has timed out."""


@dataclass(eq=False)
class CallHandle:
    """One in-flight ``tools/call``, running in a call task of the connection's session."""

    connection: ServerConnection
    tool: str
    events: CallEvents = field(default_factory=CallEvents)
    task: asyncio.Task[None] | None = None
    """The call task, once it has started (see :mod:`~langgraph_mcp.connection.calls`): a task is only cancelled once
    it runs, so its handlers always do."""
    cancelled: bool = False
    """:meth:`cancel` was called: a cancellation of the call task is ours, not the session ending under it."""
    finished: bool = False
    pending_question: ElicitEvent | None = None
    route: RoutedCall | None = None
    """Legacy: the call as the connection's router sees it (its turn, the questions routed to it)."""
    ended: bool = False
    """A final event (done or failed) was queued: later ones are dropped."""
    transport_failed: bool = False
    """The connection's task group cancelled the call: its failure is explained once the owner has the reason."""
    slot: asyncio.Semaphore | None = None
    """Legacy over HTTP: the connection's call slot this call holds (see ``transport.legacy_call_slots``)."""
    timed_out: bool = False
    """The current :meth:`next_event` wait ran past its timeout."""
    abandoning: bool = False
    """:meth:`abandon` runs: it, not the job, gives the slot back once the server let go of the question."""

    def cancel(self) -> None:
        """Cancel the request (the SDK sends ``notifications/cancelled``); a call not started yet is never sent."""
        self.cancelled = True
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    def release_slot(self) -> None:
        slot, self.slot = self.slot, None
        if slot is not None:
            slot.release()

    def end(self, event: DoneEvent | FailedEvent) -> None:
        if not self.ended:
            self.ended = True
            self.events.put(event)

    @property
    def waits_for_human(self) -> bool:
        return self.pending_question is not None and not self.pending_question.reply.done()

    async def next_event(self, timeout: float) -> CallEvent:
        """Wait for the server's next move; cancel the call and raise ``ToolCallTimeoutError`` after ``timeout``."""
        # The connection's one timer for all such waits (see event_deadlines), not a timer per wait.
        self.timed_out = False
        deadlines = self.connection.event_deadlines
        deadlines.watch(self, timeout, self._expire)
        try:
            while (event := await self.events.get()) is _WAKE_UP:
                if self.timed_out:
                    break  # else a wake-up left over from an earlier wait that got its event at the same time
        finally:
            deadlines.forget(self)
        if event is _WAKE_UP:
            await self.abandon()
            raise ToolCallTimeoutError(self.connection.name, self.tool, timeout) from None
        if isinstance(event, ElicitEvent):
            self.pending_question = event
        elif isinstance(event, DoneEvent | FailedEvent):
            self.finished = True
            if isinstance(event, FailedEvent) and self.transport_failed:
                what = f"the call to {self.tool!r}"
                event = FailedEvent(
                    await self.connection.failures.transport_failed(what, None, tool=self.tool)
                )
        return event

    def _expire(self) -> None:
        self.timed_out = True
        self.events.put(_WAKE_UP)

    async def deliver(self, params: types.ElicitRequestParams) -> ElicitReply:
        """A question the router attributed to this call: queue it for the driver and wait for the answer."""
        reply: asyncio.Future[ElicitReply] = asyncio.get_running_loop().create_future()
        self.events.put(ElicitEvent(params, reply))
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
        self.abandoning = True
        self.cancel()
        question = self.pending_question
        try:
            if question is not None and not question.reply.done():
                # asyncio.wait, not wait_for: the grace running out or the server withdrawing its question (the
                # future cancelled) ends the wait quietly, while a cancellation of this caller propagates.
                await asyncio.wait([question.reply], timeout=ABANDON_GRACE_SECONDS)
        finally:
            # Even for a cancelled caller: the server's question must not stay open, nor the call in the router.
            if question is not None and not question.reply.done():
                question.reply.set_result(
                    types.ErrorData(code=types.INTERNAL_ERROR, message="The client abandoned this tool call.")
                )
            self.connection.end_legacy_call(self, "unsettled")
            # The server withdrew its question once it saw the cancellation, so the call's POST is ending.
            self.release_slot()


class ServerConnection:
    """A connection to one MCP server, bound to the event loop it was started in: its requests and calls, the
    legacy calls' routing, and the server's callbacks; the client itself is :attr:`owner`'s.

    Longer than ~250 lines because about a fifth of it is the read-only view of its owner (state, era, starts)
    that callers read through it, and the three request paths (``request``, ``start_call``, ``call``) stay
    side by side; the in-flight registry they share and ``request``'s owner job are :attr:`jobs`'."""

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        *,
        on_list_changed: ListChanged | None = None,
    ) -> None:
        self.name = name
        self.spec = spec
        self._on_list_changed = on_list_changed
        self.logs = ServerLogs(name)
        """The server's log messages (see :mod:`langgraph_mcp.connection.logs`)."""
        self.router = LegacyCallRouter(name, spec.exclusive_tools)
        """Which legacy call a pushed question belongs to, and which calls must run alone."""
        slots = legacy_call_slots(spec)
        self._call_slots = asyncio.Semaphore(slots) if slots is not None else None
        self.parked_call_limit = (
            spec.max_parked_calls if slots is None else min(spec.max_parked_calls, slots - 1)
        )
        """How many legacy calls may stay parked: below the call slots, so a new call can always be sent."""
        self.owner = ClientOwner(
            name,
            spec,
            options=self._client_options,
            on_invalid=self._on_invalid_message,
            on_new_session=self.router.new_session,
            on_connected=self._on_connected,
            on_list_changed=on_list_changed,
        )
        """The owner task holding the ``Client``: starts, restarts with backoff, stops."""
        self.failures = FailureReader(name, spec, self.owner)
        """What a caller sees for a failure under a request."""
        self.event_deadlines = EventDeadlines()
        """The one timer for the waits of this connection's calls for their next event."""
        self.sampling_counts: collections.Counter[str] = collections.Counter()
        """Sampling requests answered per thread (see calls.sampling): the cap counts here."""
        self.jobs = RequestJobs(name, self.owner, self.failures)
        """The requests in flight (a bad server message fails them at once), and :meth:`request`'s owner job."""

    # ------------------------------------------------------------------------------------------- the client

    def _client_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "elicitation_callback": self._on_elicit,
            "message_handler": self._on_message,
            "logging_callback": self.logs.on_message,
            "log_level": self.spec.log_level,
        }
        if self.spec.roots is not None:
            options["list_roots_callback"] = self._on_list_roots
        if self.spec.sampling_model is not None:  # legacy: pushed sampling/createMessage, routed to its call
            options["sampling_callback"] = self._on_sample
        if self.spec.tasks:  # advertised on the 2026-07-28 revision only (the SDK drops the claim on legacy)
            options["extensions"] = [TasksExtension()]
        return options

    async def _on_connected(self, client: Client) -> None:
        await self.logs.ask_for_level(client, self.spec.log_level)

    # ------------------------------------------------------------------------------------------- failures

    def _on_invalid_message(self, error: Exception) -> None:
        """The server sent something that looks like JSON-RPC but cannot be parsed: whatever request it answered
        would wait forever, so every request in flight (except calls waiting for a human) fails at once."""
        self.jobs.fail_all(self.failures.invalid_message(error))

    def _call_error(self, tool: str, exc: BaseException, client: Client) -> BaseException:
        return self.failures.read(exc, client, what=f"the call to {tool!r}", tool=tool)

    # ------------------------------------------------------------------------------------------- requests

    async def request(
        self, make: Callable[[Client], Awaitable[T]], *, timeout: float, what: str = "a request"
    ) -> T:
        """Run one request as a job of the owner task; a finite timeout always applies.

        A transport failure is always a :class:`ServerConnectionError` for the caller, never a cancellation.
        """
        return await self.jobs.run(make, timeout=timeout, what=what)

    async def start_call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        input_responses: dict[str, Any] | None = None,
        request_state: str | None = None,
    ) -> CallHandle:
        """Start a ``tools/call`` in a call task of the session and return its handle (events arrive on it)."""
        client = await self.owner.client()
        handle = CallHandle(self, tool)
        legacy = self.owner.is_legacy
        if legacy:
            handle.route = self.router.begin_now(tool, handle.deliver) or await self._wait_for_turn(handle)
            if self._call_slots is not None:
                await self._take_call_slot(handle, self.spec.tool_timeout)
        tasks = self.owner.call_tasks
        if (
            tasks is None or tasks.ended or client is not self.owner.current
        ):  # the connection died while the call waited for its turn
            self.end_legacy_call(handle, "unsent")
            handle.release_slot()
            raise CallNotSentError(
                self.name,
                f"connection lost before calling {tool!r} ({describe_error(self.owner.last_error)}); it was not sent",
                tool=tool,
            )
        # Legacy calls may wait for a human inside an elicitation: the per-event timeout in next_event bounds the
        # server's work, and the park timeout bounds the human's, so the bound on the whole call only has to cover
        # both (it ends a call nobody waits for any more). On the connection's one timer (see event_deadlines), not
        # the SDK's read timeout: a timer per call less.
        spec = self.spec
        bound = spec.tool_timeout + spec.park_timeout + 5 if legacy else spec.tool_timeout + 5

        def out_of_time() -> None:
            timed_out = MCPError(code=types.REQUEST_TIMEOUT, message="Request 'tools/call' timed out")
            handle.end(FailedEvent(self._call_error(tool, timed_out, client)))
            handle.cancel()

        def fail(error: BaseException) -> None:
            if not handle.waits_for_human:
                handle.end(FailedEvent(error))
                handle.cancel()

        def cancelled() -> FailedEvent:
            return FailedEvent(ServerConnectionError(self.name, f"call {tool!r} cancelled", tool=tool))

        async def job() -> None:
            # Cancelled through its own task (CallHandle.cancel), not an anyio scope: ~5 us less per call.
            handle.task = asyncio.current_task()
            if handle.route is not None:
                self.router.enter(handle.route)
            try:
                if handle.cancelled:  # abandoned before it started: never sent
                    self.end_legacy_call(handle, "unsent")
                    handle.end(cancelled())
                    return
                result = await client.session.call_tool(
                    tool,
                    arguments,
                    progress_callback=cast(Any, progress),
                    input_responses=cast(Any, input_responses),
                    request_state=request_state,
                    allow_input_required=True,
                )
            except asyncio.CancelledError:
                self.end_legacy_call(handle, "unsettled")
                if handle.cancelled:  # our own abandon or timeout: the call ends here
                    handle.end(cancelled())
                    return
                # Not ours: the session ended under it (the transport failed, or the connection is closing).
                handle.transport_failed = True
                self.owner.mark_dead(ServerConnectionError(self.name, "the transport failed"), client)
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
            finally:
                self.event_deadlines.forget(key)
                self.jobs.untrack(key)
                if not handle.abandoning:
                    handle.release_slot()

        key = self.jobs.track(fail)
        self.event_deadlines.watch(key, bound, out_of_time)
        # Its own task, not the caller's (a legacy call may stay parked after its caller was interrupted), in a
        # fresh context (see call_tasks); ended with the session.
        tasks.start(job())
        return handle

    async def _wait_for_turn(self, handle: CallHandle) -> RoutedCall:
        """No unbounded wait: a call waiting its turn (behind one that must run alone) gives up after
        tool_timeout, unsent."""
        wait, tool = self.spec.tool_timeout, handle.tool
        try:
            # Not wait_for (on 3.11 it runs the wait in one more task), and not asyncio.timeout (see deadlines).
            async with deadline(wait):
                return await self.router.begin(tool, handle.deliver)
        except TimeoutError:
            raise CallNotSentError(
                self.name,
                f"the call to {tool!r} waited more than {wait:g}s for its turn (another call to this server "
                "must run alone); it was not sent",
                tool=tool,
            ) from None

    async def _take_call_slot(self, handle: CallHandle, wait: float) -> None:
        """Wait (within ``wait``) for one of the legacy call slots, each a pooled HTTP connection; unsent if none."""
        assert self._call_slots is not None
        try:
            async with deadline(wait):  # no timer left holding the caller's graph run (see deadlines)
                await self._call_slots.acquire()
        except TimeoutError:
            self.end_legacy_call(handle, "unsent")
            raise CallNotSentError(
                self.name,
                f"the call to {handle.tool!r} waited more than {wait:g}s for a free HTTP connection: every one "
                "the pool allows is held by another legacy call, running or parked (raise max_connections, or "
                "lower max_parked_calls); it was not sent",
                tool=handle.tool,
            ) from None
        handle.slot = self._call_slots

    @property
    def offers_tasks(self) -> bool:
        """The live session is modern, this server offers the tasks extension, and the package advertises it."""
        client = self.owner.current
        if client is None or self.owner.is_legacy or not self.spec.tasks:
            return False
        return offers_tasks(client.server_capabilities)

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        input_responses: dict[str, Any] | None = None,
        request_state: str | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult | TaskCreated:
        """One ``tools/call`` awaited in the caller's own task, for calls that can't pause inside the server
        (2026-07-28: questions come back as an ``InputRequiredResult``). No owner job and no event queue: those hops
        made a call cost ~1.1x the raw SDK call; a lost transport still fails the SDK request at once."""
        client = await self.owner.client()
        timeout = self.spec.tool_timeout
        try:
            # This bound covers the whole request in this very task (the write too), so the SDK gets none of its
            # own: a second timer per call that could never fire first. On the connection's one timer (see
            # event_deadlines): no timer per call, and none holding a copy of the caller's graph run once done.
            async with self.event_deadlines.cancel_after(timeout) as guard:
                # In flight for fail_all too: an answer the SDK could not parse fails the call at once, not at its
                # timeout (the SDK drops such a message; no request ever gets it).
                key = self.jobs.track(guard.fail)
                try:
                    result = await client.session.call_tool(
                        tool,
                        arguments,
                        progress_callback=cast(Any, progress),
                        input_responses=cast(Any, input_responses),
                        request_state=request_state,
                        allow_input_required=True,
                        allow_claimed=True,  # a task handle comes back as TaskCreated (see calls.tasks)
                    )
                finally:
                    self.jobs.untrack(key)
            if isinstance(result, types.CallToolResult | types.InputRequiredResult | TaskCreated):
                return result
            raise InvalidResponseError(
                self.name, f"the call to {tool!r} was answered with {type(result).__name__}"
            )
        except TimeoutError:  # the deadline cancelled the request: the SDK sent notifications/cancelled
            raise ToolCallTimeoutError(self.name, tool, timeout) from None
        except Exception as exc:
            error = self._call_error(tool, exc, client)
            if error is exc:
                raise
            raise error from exc

    async def task_request(
        self, send: Callable[[ClientSession], Awaitable[T]], *, what: str, timeout: float | None = None
    ) -> T:
        """One ``tasks/*`` request on the live session, bounded by ``timeout`` (default: ``tool_timeout``)."""
        bound = self.spec.tool_timeout if timeout is None else timeout
        return await self.request(lambda client: send(client.session), timeout=bound, what=what)

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

    # ------------------------------------------------------------------------------------------- callbacks

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> ElicitReply:
        return await self.router.route(params)

    async def _on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        reply = await self.router.route(cast(Any, params))  # the call's driver answers it (calls.sampling)
        return cast(types.CreateMessageResult | types.ErrorData, reply)

    async def _on_list_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return roots_result(self.spec.roots)

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, Exception):  # the transport watch takes parse failures out of the flow first
            self._on_invalid_message(message)
            return
        kind = _LIST_CHANGED.get(type(message))
        if kind is not None and self._on_list_changed is not None:
            self._on_list_changed(self.name, kind)


def roots_result(roots: list[str] | None) -> types.ListRootsResult:
    """The answer to ``roots/list`` in both eras: each configured root as a URI, a path resolved to an absolute
    ``file://`` URI (relative paths against the current directory), a URI as given."""
    return types.ListRootsResult(
        roots=[types.Root(uri=r if "://" in r else Path(r).resolve().as_uri()) for r in roots or []]  # type: ignore[arg-type]
    )


EraName = Literal["modern", "legacy"]


def era_of(version: str | None) -> EraName | None:
    if version is None:
        return None
    return "legacy" if version in HANDSHAKE_PROTOCOL_VERSIONS else "modern"
