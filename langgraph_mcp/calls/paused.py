"""Paused rounds: what a same-process resume needs to continue a tool call exactly where its graph paused.

A round is paused when the call driver raised an interrupt for a round of questions. Besides the answers (which
live in LangGraph's checkpoint), continuing the call needs state that only this process holds:

* legacy era — the ``tools/call`` itself, still open inside its ``elicitation/create`` (the answer goes straight
  to it, and the server sees one ordinary attempt);
* modern era — the round's ``requestState`` and its ``inputRequests``, sent back with the answers.

Nothing here is ever checkpointed. A round that is not found (another process, a restart, the park timeout) sends
the driver down the durable path: re-issue the call and answer it from the stored answers.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from dataclasses import dataclass
from typing import Any

from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.legacy_calls import CallHandle, ProgressCallback
from langgraph_mcp.errors import TooManyParkedCallsError

logger = logging.getLogger("langgraph_mcp.elicitation")

PauseKey = tuple[str, ...]
"""(thread id, checkpoint namespace, tool call id): one paused tool call of one graph task."""


class ProgressRelay:
    """A legacy call's progress callback, which outlives the graph run that started it when the call is parked: it
    forwards to the run the call belongs to now (nobody while parked), so the paused run is not kept alive and a
    resumed run streams the progress of the call it continues."""

    def __init__(self, target: ProgressCallback | None) -> None:
        self.target = target

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self.target is not None:
            await self.target(progress, total, message)


@dataclass
class PausedRound:
    """One paused round of questions of one tool call."""

    legacy_call: CallHandle | None
    """Legacy: the open call, waiting inside its ``elicitation/create``. ``None`` for a modern round."""
    resume_index: int
    """Where this round's answer is in the task's resume values (the index of the interrupt it raised)."""
    round: int
    """Which round of questions of the call this is (1 for the first)."""
    request_state: str | None = None
    """Modern: the server's opaque ``requestState`` for this round, sent back with the answers."""
    input_requests: dict[str, Any] | None = None
    """Modern: the round's ``inputRequests`` as the server sent them (JSON), to rebuild the questions."""
    deadline: float = 0.0
    """``time.monotonic()`` after which the round is no longer continued (``park_timeout``)."""
    connection_start: int = 0
    """Which start of the connection the round belongs to: after a restart its open call is gone."""
    progress: ProgressRelay | None = None
    """Legacy: where the open call's progress goes (pointed at the resumed run by the driver)."""
    expiry: asyncio.TimerHandle | None = None
    """Legacy: the timer that ends the open call at ``deadline``."""
    replayable: bool = False
    """Legacy: the tool may safely run twice (trusted read-only or idempotent hints), so past
    ``max_parked_calls`` its call may be cancelled now and re-issued on resume."""


class PausedRounds:
    """The paused rounds of one connection, by :data:`PauseKey`; a legacy round's open call ends at its deadline."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection
        self.kept: dict[PauseKey, PausedRound] = {}
        """The kept rounds (read it: empty means nothing to continue; :meth:`keep` and :meth:`take` change it)."""
        self._expiring: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self.kept)

    def keep(self, key: PauseKey, paused: PausedRound) -> None:
        """Keep a paused round for a same-process resume; a legacy call lets other calls run while it waits.

        Past the connection's cap on parked calls (``max_parked_calls``) a legacy call is not kept open: a
        replayable one is cancelled and re-issued on resume; any other raises :class:`TooManyParkedCallsError`
        (the caller cancels it), because a server that ignores the cancellation would run it twice."""
        paused.deadline = time.monotonic() + self.connection.spec.park_timeout
        paused.connection_start = self.connection.owner.starts
        old = self.kept.pop(key, None)
        if old is not None:
            _stop_expiry(old)
            if old.legacy_call is not None and old.legacy_call is not paused.legacy_call:
                self._abandon(old.legacy_call)
        call = paused.legacy_call
        if call is not None and self.open_legacy_calls() >= self.connection.legacy.parked_call_limit:
            # Each open legacy call holds a response (an HTTP connection) until it is answered: past the cap the
            # call is cancelled on the server instead, and the resume re-issues it (the durable path) - but only
            # when running it twice is safe: many servers don't honour a cancellation and finish the first run.
            if not paused.replayable:
                raise self._too_many(call)
            logger.warning(
                "MCP server %r: %d legacy calls already wait for an answer (max_parked_calls, or fewer than the "
                "HTTP pool's max_connections); the call to %r is cancelled now and re-issued on resume",
                self.connection.name,
                self.connection.legacy.parked_call_limit,
                call.tool,
            )
            self._abandon(call)
            return
        self.kept[key] = paused
        if paused.progress is not None:
            paused.progress.target = None  # the run that started the call is pausing
        if call is not None:
            self.connection.legacy.pause(call)
            # A timer, not a task, and in an empty context: anything scheduled from the graph task carries a copy
            # of its context (the paused run's config, stream and callbacks) and would keep that run alive.
            paused.expiry = asyncio.get_running_loop().call_later(
                self.connection.spec.park_timeout, self._expire, key, paused, context=contextvars.Context()
            )

    def _too_many(self, call: CallHandle) -> TooManyParkedCallsError:
        conn = self.connection
        limit, cap = conn.legacy.parked_call_limit, conn.spec.max_parked_calls
        why = (
            f"max_parked_calls={cap}"
            if limit == cap
            else f"max_parked_calls={cap}; the HTTP pool allows {limit}"
        )
        detail = (
            f"the call to {call.tool!r} asked a question while {limit} legacy calls already wait for an answer on "
            f"this connection ({why}); it was cancelled on the server instead of pausing, and is not re-issued "
            "because its tool is not declared read-only or idempotent by a trusted server (what it did before "
            "asking may have happened). Answer the waiting calls first, or raise max_parked_calls"
        )
        return TooManyParkedCallsError(conn.name, detail, tool=call.tool)

    def open_legacy_calls(self) -> int:
        """How many kept rounds hold an open legacy call."""
        return sum(1 for paused in self.kept.values() if paused.legacy_call is not None)

    def take(self, key: PauseKey) -> PausedRound | None:
        """The live paused round for ``key`` (removed), or ``None`` when it is gone: past its deadline, or (legacy)
        its call ended or the connection was restarted since (the server restarted): the durable path re-issues it."""
        paused = self.kept.pop(key, None)
        if paused is None:
            return None
        _stop_expiry(paused)
        call = paused.legacy_call
        if time.monotonic() > paused.deadline or (call is not None and not self._still_open(paused, call)):
            if call is not None:
                self._abandon(call)
            return None
        return paused

    def _still_open(self, paused: PausedRound, call: CallHandle) -> bool:
        ended = call.route is not None and call.route.ended is not None
        return not (call.finished or ended or self.connection.owner.starts != paused.connection_start)

    def _abandon(self, call: CallHandle) -> None:
        # A job in an empty context: a copy of the graph task's would keep its run alive while the call ends.
        contextvars.Context().run(self.connection.owner.spawn, call.abandon())

    def _expire(self, key: PauseKey, paused: PausedRound) -> None:
        paused.expiry = None
        if self.kept.get(key) is not paused or self.connection.owner.closed:
            return
        del self.kept[key]
        call = paused.legacy_call
        assert call is not None
        # A timer callback runs outside any task, where the owner's task group can't start a job: the call is
        # abandoned in a task of its own (still in the timer's empty context).
        task = asyncio.get_running_loop().create_task(self._abandon_expired(call))
        self._expiring.add(task)
        task.add_done_callback(self._expiring.discard)

    async def _abandon_expired(self, call: CallHandle) -> None:
        await call.abandon()  # the router keeps it a possible owner of late questions for a grace period
        logger.info(
            "MCP server %r: a parked call to %r outlived its park timeout; cancelled",
            self.connection.name,
            call.tool,
        )


def _stop_expiry(paused: PausedRound) -> None:
    timer, paused.expiry = paused.expiry, None
    if timer is not None:
        timer.cancel()
