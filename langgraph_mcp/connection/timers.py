"""Deadlines: a plain deadline helper and the connection's one timer for call deadlines.

Timeouts for waits in a graph's task that keep nothing of the graph run alive once the wait is over.

``asyncio.timeout()`` schedules its timer with a copy of the waiting task's context, and a cancelled timer stays in
the event loop's heap, with that copy, until its deadline (or until more than half the heap is cancelled timers).
Waited in a graph task, the copy holds the run's config — its pregel loop, scratchpad, stream and callbacks — so a
run paused right after such a wait (a legacy call parked in its question) would stay in memory for the whole
timeout. :func:`deadline` schedules the same timer in an empty context.

One timer per connection for the deadlines of its calls: each wait for the server's next move
(``CallHandle.next_event``), each whole call in a task (a bound that ends a call nobody waits for any more), and
each call awaited in the caller's task (:meth:`EventDeadlines.cancel_after`, ``asyncio.timeout`` on this timer).

A timer per deadline (``asyncio.timeout``, the SDK's read timeout) costs ~5 us CPU per call to arm and cancel. Calls made one after another
have later and later deadlines, so one timer, armed for the earliest, is enough: a wait that ends only forgets its
deadline (the timer stays armed), and when the timer fires it expires the waits that are past theirs and re-arms
for the earliest left. The timer runs in an empty context, so it keeps nothing of a caller's graph run alive.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from collections.abc import Callable, Hashable
from types import TracebackType

__all__ = ["CancelAfter", "EventDeadlines", "deadline"]


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


# The loop runs a timer up to its clock resolution early: a wait this close to its deadline counts as past it.
_EARLY = 1e-3


class EventDeadlines:
    """The deadlines in flight on one connection (one event loop), and the one timer over them."""

    def __init__(self) -> None:
        self._waits: dict[Hashable, tuple[float, Callable[[], None]]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._due = math.inf

    def watch(self, wait: Hashable, seconds: float, expire: Callable[[], None]) -> None:
        """Call ``expire()`` once ``seconds`` have passed, unless :meth:`forget` is called for ``wait`` first (a
        later :meth:`watch` of the same ``wait`` replaces its deadline)."""
        loop = asyncio.get_running_loop()
        when = loop.time() + seconds
        self._waits[wait] = (when, expire)
        if when < self._due:
            self._arm(loop, when)

    def forget(self, wait: Hashable) -> None:
        self._waits.pop(wait, None)

    def fail_blocks(self, error: BaseException) -> None:
        """End every :meth:`cancel_after` block in flight now with ``error`` (see :meth:`CancelAfter.fail`): the
        blocks are in this registry already, so no second one has to know them."""
        for wait in [w for w in self._waits if isinstance(w, CancelAfter)]:
            wait.fail(error)

    def cancel_after(self, seconds: float) -> CancelAfter:
        """``asyncio.timeout(seconds)`` for the current task (raises ``TimeoutError``), on this timer."""
        return CancelAfter(self, seconds)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._due = when
        self._timer = loop.call_at(when, self._fire, context=contextvars.Context())

    def _fire(self) -> None:
        self._timer, self._due = None, math.inf
        loop = asyncio.get_running_loop()
        now = loop.time() + _EARLY
        expired = [(wait, expire) for wait, (when, expire) in self._waits.items() if when <= now]
        for wait, expire in expired:
            del self._waits[wait]
            expire()
        if self._waits:
            self._arm(loop, min(when for when, _ in self._waits.values()))


class CancelAfter:
    """What ``asyncio.timeout`` does (cancel the task at the deadline; a cancellation that is the deadline's own
    leaves as ``TimeoutError``), with the deadline on an :class:`EventDeadlines` timer instead of one of its own;
    :meth:`fail` ends the block early the same way, with an error of the caller's choosing."""

    __slots__ = ("_cancelling", "_deadlines", "_expired", "_failure", "_seconds", "_task")

    def __init__(self, deadlines: EventDeadlines, seconds: float) -> None:
        self._deadlines = deadlines
        self._seconds = seconds
        self._expired = False
        self._failure: BaseException | None = None

    async def __aenter__(self) -> CancelAfter:
        task = asyncio.current_task()
        assert task is not None  # an async with runs in a task
        self._task = task
        self._cancelling = task.cancelling()
        self._deadlines.watch(self, self._seconds, self._expire)
        return self

    def fail(self, error: BaseException) -> None:
        """End the block now: it raises ``error`` (unless the deadline or an earlier failure came first)."""
        if not self._expired and self._failure is None:
            self._failure = error
            self._task.cancel()

    def _expire(self) -> None:
        self._expired = True
        self._task.cancel()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._deadlines.forget(self)
        # As asyncio.Timeout.__aexit__: only a cancellation beyond those pending on entry is the deadline's.
        ours = self._expired or self._failure is not None
        if ours and self._task.uncancel() <= self._cancelling and kind is asyncio.CancelledError:
            if self._failure is not None:
                raise self._failure from None
            raise TimeoutError from error
