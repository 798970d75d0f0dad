"""Timeouts for waits in a graph's task that keep nothing of the graph run alive once the wait is over.

``asyncio.timeout()`` schedules its timer with a copy of the waiting task's context, and a cancelled timer stays in
the event loop's heap, with that copy, until its deadline (or until more than half the heap is cancelled timers).
Waited in a graph task, the copy holds the run's config — its pregel loop, scratchpad, stream and callbacks — so a
run paused right after such a wait (a legacy call parked in its question) would stay in memory for the whole
timeout. :func:`deadline` schedules the same timer in an empty context.
"""

from __future__ import annotations

import asyncio
import contextvars
from types import TracebackType

__all__ = ["deadline"]


class _Deadline:
    __slots__ = ("_seconds", "_timeout")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._timeout = asyncio.timeout(None)

    async def __aenter__(self) -> asyncio.Timeout:
        timeout = await self._timeout.__aenter__()
        when = asyncio.get_running_loop().time() + self._seconds
        contextvars.Context().run(timeout.reschedule, when)
        return timeout

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._timeout.__aexit__(kind, error, tb)


def deadline(seconds: float) -> _Deadline:
    """``asyncio.timeout(seconds)`` (raises ``TimeoutError``), whose timer holds no copy of the caller's context."""
    return _Deadline(seconds)
