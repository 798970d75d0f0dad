"""Legacy calls: each ``tools/call`` in a call task of the session (:mod:`~langgraph_mcp.connection.calls`), started
in its turn and, over HTTP, on one of the connection's call slots; its results and the server's questions come back
through its :class:`CallHandle`. A call's task belongs to the connection, not to its caller, so a call waiting for a
human's answer can stay open ("parked") after the graph node that started it was interrupted.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import mcp.types as types
from mcp import Client, MCPError

from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.calls import CallTasks
from langgraph_mcp.connection.failures import FailureReader, describe_error
from langgraph_mcp.connection.legacy_routing import CallEnd, ElicitReply, LegacyCallRouter, RoutedCall
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.connection.requests import RequestJobs
from langgraph_mcp.connection.timers import EventDeadlines, deadline
from langgraph_mcp.credentials import CALL_META
from langgraph_mcp.errors import CallNotSentError, ServerConnectionError, ToolCallTimeoutError

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
"""How a call reports ``notifications/progress``: ``(progress, total, message)``."""


# How long an abandoned legacy question may stay unanswered after its call was cancelled before it gets an
# error answer (servers on the TypeScript SDK 1.x don't withdraw a question when its call is cancelled).
ABANDON_GRACE_SECONDS = 1.0


_UNANSWERED_CODES = (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT)


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

    calls: LegacyCalls
    """The connection's legacy calls, this one among them."""
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
    """Legacy over HTTP: the connection's call slot this call holds (see ``Transport.legacy_call_slots``)."""
    timed_out: bool = False
    """The current :meth:`next_event` wait ran past its timeout."""
    abandoning: bool = False
    """:meth:`abandon` runs: it, not the job, gives the slot back once the server let go of the question."""
    withdrawn: bool = False
    """After :meth:`abandon`: the server withdrew its open question when the call was cancelled (its
    ``notifications/cancelled``), confirming the cancellation; no error answer was sent."""

    def cancel(self) -> None:
        """Cancel the request (the SDK sends ``notifications/cancelled``); a call not started yet is never sent."""
        self.cancelled = True
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    def fail(self, error: BaseException) -> None:
        """Fail the call at once (a message from the server that can't be parsed), unless it waits for a human."""
        if not self.waits_for_human:
            self.end(FailedEvent(error))
            self.cancel()

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
        deadlines = self.calls.event_deadlines
        deadlines.watch(self, timeout, self._expire)
        try:
            while (event := await self.events.get()) is _WAKE_UP:
                if self.timed_out:
                    break  # else a wake-up left over from an earlier wait that got its event at the same time
        finally:
            deadlines.forget(self)
        if event is _WAKE_UP:
            await self.abandon()
            raise ToolCallTimeoutError(self.calls.name, self.tool, timeout) from None
        if isinstance(event, ElicitEvent):
            self.pending_question = event
        elif isinstance(event, DoneEvent | FailedEvent):
            self.finished = True
            if isinstance(event, FailedEvent) and self.transport_failed:
                what = f"the call to {self.tool!r}"
                event = FailedEvent(await self.calls.failures.transport_failed(what, None, tool=self.tool))
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
            self.withdrawn = question is not None and question.reply.cancelled()
            # Even for a cancelled caller: the server's question must not stay open, nor the call in the router.
            if question is not None and not question.reply.done():
                question.reply.set_result(
                    types.ErrorData(code=types.INTERNAL_ERROR, message="The client abandoned this tool call.")
                )
            self.calls.end(self, "unsettled")
            # The server withdrew its question once it saw the cancellation, so the call's POST is ending.
            self.release_slot()


class LegacyCalls:
    """The legacy ``tools/call`` requests of one connection, each in a call task of the session: started in its
    turn (:class:`~langgraph_mcp.connection.legacy_routing.LegacyCallRouter`) and, over HTTP, on one of the
    connection's call slots; its events (results, pushed questions) arrive on its :class:`CallHandle`."""

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        owner: ClientOwner,
        router: LegacyCallRouter,
        failures: FailureReader,
        jobs: RequestJobs,
        event_deadlines: EventDeadlines,
    ) -> None:
        self.name = name
        self.spec = spec
        self.owner = owner
        self.router = router
        self.failures = failures
        self.jobs = jobs
        self.event_deadlines = event_deadlines
        slots = spec.legacy_call_slots()
        self._call_slots = asyncio.Semaphore(slots) if slots is not None else None
        self.parked_call_limit = (
            spec.max_parked_calls if slots is None else min(spec.max_parked_calls, slots - 1)
        )
        """How many legacy calls may stay parked: below the call slots, so a new call can always be sent."""

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
            self.end(handle, "unsent")
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

        key = self.jobs.track(handle.fail)
        self.event_deadlines.watch(key, bound, partial(self._out_of_time, handle, client))
        # Typed as Any here, not with cast(): cast is a function call on every legacy call.
        progress_callback: Any = progress
        responses: Any = input_responses
        send = partial(
            client.session.call_tool,
            tool,
            arguments,
            progress_callback=progress_callback,
            input_responses=responses,
            request_state=request_state,
            allow_input_required=True,
            meta=CALL_META.get(),  # a decided call's idempotency key
        )
        # Its own task, not the caller's (a legacy call may stay parked after its caller was interrupted), in a
        # fresh context (see call_tasks); ended with the session.
        tasks.start(self._job(handle, client, key, tasks, send))
        return handle

    async def _job(
        self,
        handle: CallHandle,
        client: Client,
        key: object,
        tasks: CallTasks,
        send: Callable[[], Awaitable[types.CallToolResult | types.InputRequiredResult]],
    ) -> None:
        """The call task: send the request and queue how it ended on the handle."""
        # Cancelled through its own task (CallHandle.cancel), not an anyio scope: ~5 us less per call.
        handle.task = asyncio.current_task()
        route, tool = handle.route, handle.tool
        if route is not None:
            self.router.enter(route)
        try:
            if handle.cancelled:  # abandoned before it started: never sent
                self.end(handle, "unsent")
                handle.end(self._cancelled(tool))
                return
            result = await send()
        except asyncio.CancelledError:
            self.end(handle, "unsettled")
            if handle.cancelled:  # our own abandon or timeout: the call ends here
                handle.end(self._cancelled(tool))
                return
            # Not ours: the session ended under it (the transport failed, or the connection is closing).
            handle.transport_failed = True
            self.owner.mark_dead(ServerConnectionError(self.name, "the transport failed"), client)
            handle.end(FailedEvent(ServerConnectionError(self.name, "the transport failed")))
            raise
        except BaseException as exc:
            error = self.failures.read(exc, client, what=f"the call to {tool!r}", tool=tool)
            # An error response means the server finished the request; a lost or timed-out one doesn't.
            answered = isinstance(error, MCPError) and error.code not in _UNANSWERED_CODES
            self.end(handle, "server" if answered else "unsettled")
            handle.end(FailedEvent(error))
        else:
            if route is not None:
                self.router.end(route, "server")
            if not self.owner.served:
                self.owner.session_served()
            handle.end(DoneEvent(result))
        finally:
            self.event_deadlines.forget(key)
            self.jobs.untrack(key)
            if not handle.abandoning:
                handle.release_slot()
            tasks.finished(handle.task)

    def _out_of_time(self, handle: CallHandle, client: Client) -> None:
        """The bound on the whole call ran out: it fails as a timed-out request, and is cancelled."""
        timed_out = MCPError(code=types.REQUEST_TIMEOUT, message="Request 'tools/call' timed out")
        what = f"the call to {handle.tool!r}"
        handle.end(FailedEvent(self.failures.read(timed_out, client, what=what, tool=handle.tool)))
        handle.cancel()

    def _cancelled(self, tool: str) -> FailedEvent:
        return FailedEvent(ServerConnectionError(self.name, f"call {tool!r} cancelled", tool=tool))

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
            self.end(handle, "unsent")
            raise CallNotSentError(
                self.name,
                f"the call to {handle.tool!r} waited more than {wait:g}s for a free HTTP connection: every one "
                "the pool allows is held by another legacy call, running or parked (raise max_connections, or "
                "lower max_parked_calls); it was not sent",
                tool=handle.tool,
            ) from None
        handle.slot = self._call_slots

    def pause(self, handle: CallHandle) -> None:
        """The call is parked inside its question: other calls may run meanwhile."""
        if handle.route is not None:
            self.router.pause(handle.route)

    async def resume(self, handle: CallHandle) -> None:
        """A parked call is about to get its answer: wait for its turn again."""
        if handle.route is not None:
            await self.router.resume(handle.route)

    def end(self, handle: CallHandle, how: CallEnd) -> None:
        """The call is over (``how``: see :class:`~langgraph_mcp.connection.legacy_routing.LegacyCallRouter`)."""
        if handle.route is not None:
            self.router.end(handle.route, how)
