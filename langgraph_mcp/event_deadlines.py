"""One timer per connection for the deadlines of its calls in tasks: each wait for the server's next move
(``CallHandle.next_event``), and each whole call (a bound that ends a call nobody waits for any more).

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

__all__ = ["EventDeadlines"]

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
