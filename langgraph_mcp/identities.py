"""Bookkeeping for per-run credential identities: which are in use, which are idle, which to close first.

Only identities whose credentials came from the run (``Identity.per_run``) are tracked: a server with fixed
credentials keeps its one connection for the life of ``McpServers``. A tracked identity may be closed when nothing
holds it (no call in flight, no paused call kept for it) and it was last used ``idle_timeout`` seconds ago, or
earlier, least recently used first, when more than ``max_identities`` are live. The owner (``McpServers``) does the
closing; this class never does I/O.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

__all__ = ["IdentityPool"]


@dataclass
class _Use:
    last_used: float
    active: int = 0


class IdentityPool:
    """Use counts and recency of the live per-run identities of one event loop."""

    def __init__(self, idle_timeout: float, max_identities: int, clock: Callable[[], float] = time.monotonic):
        self.idle_timeout = idle_timeout
        self.max_identities = max_identities
        self._clock = clock
        self._uses: OrderedDict[Hashable, _Use] = OrderedDict()

    def __len__(self) -> int:
        return len(self._uses)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._uses

    def touch(self, key: Hashable) -> None:
        """``key`` was just used (most recent now)."""
        use = self._uses.get(key)
        if use is None:
            self._uses[key] = _Use(self._clock())
        else:
            use.last_used = self._clock()
            self._uses.move_to_end(key)

    def acquire(self, key: Hashable) -> None:
        self.touch(key)
        self._uses[key].active += 1

    def release(self, key: Hashable) -> None:
        use = self._uses.get(key)
        if use is not None:
            use.active = max(0, use.active - 1)
            use.last_used = self._clock()

    def forget(self, key: Hashable) -> None:
        self._uses.pop(key, None)

    def idle(self, busy: Callable[[Hashable], bool]) -> list[Hashable]:
        """Identities unused for ``idle_timeout`` that nothing holds (``busy`` says whether something else does)."""
        now = self._clock()
        return [
            key
            for key, use in self._uses.items()
            if use.active == 0 and now - use.last_used >= self.idle_timeout and not busy(key)
        ]

    def over_cap(self, busy: Callable[[Hashable], bool], keep: Hashable | None = None) -> list[Hashable]:
        """Least recently used identities to close so that at most ``max_identities`` stay live (never ``keep``,
        never one in use; if every other identity is in use, the cap is exceeded rather than a call broken)."""
        excess = len(self._uses) - self.max_identities
        victims: list[Hashable] = []
        for key, use in self._uses.items():
            if excess <= 0:
                break
            if key == keep or use.active > 0 or busy(key):
                continue
            victims.append(key)
            excess -= 1
        return victims

    def next_due(self, busy: Callable[[Hashable], bool]) -> float | None:
        """Seconds until the next look for idle identities is worth it (``None``: nothing to look for).

        An identity in use is left out (releasing it asks again); one held by something else (``busy``) is looked
        at again after a full ``idle_timeout``."""
        now = self._clock()
        dues = [
            self.idle_timeout if busy(key) else max(0.0, use.last_used + self.idle_timeout - now)
            for key, use in self._uses.items()
            if use.active == 0
        ]
        return min(dues) if dues else None
