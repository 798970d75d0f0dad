"""Reconnect backoff for one server: exponential, capped and jittered, with a bounded number of attempts per outage."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field


@dataclass
class ReconnectBackoff:
    """When the next connection attempt may run, and how many attempts the current outage has used.

    An *outage* starts when a live connection dies or a start fails, and ends with the next successful start.
    Within an outage up to ``attempts`` restarts run back to back (each after its backoff delay); once they are
    used up the server is *down*: calls fail at once until the delay has passed, then one more attempt runs,
    with a doubled delay after each failure (up to ``max_delay``). Jitter spreads reconnects of many workers.
    """

    attempts: int
    """Restarts allowed per outage (the server's ``restart_attempts``)."""
    initial_delay: float
    max_delay: float
    failures: int = 0
    """Failed starts (or deaths) in the current outage; 0 while healthy."""
    retry_at: float = 0.0
    """``time.monotonic()`` before which no new attempt starts."""
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    @property
    def in_outage(self) -> bool:
        return self.failures > 0

    @property
    def exhausted(self) -> bool:
        """This outage used all its restarts: only one attempt per backoff period from now on."""
        return self.failures > self.attempts

    def delay(self) -> float:
        """The delay before the next attempt: ``initial * 2**(failures-1)``, capped, times a jitter in [0.5, 1];
        none before the first restart of an outage."""
        if self.failures == 0:
            return 0.0
        if self.failures == 1 and self.attempts > 0:
            return 0.0  # the first restart of an outage runs at once (a crashed server is usually just restarted)
        base: float = min(self.max_delay, self.initial_delay * 2.0 ** min(self.failures - 1, 30))
        return base * (0.5 + self._rng.random() / 2)

    def wait_remaining(self) -> float:
        return max(0.0, self.retry_at - time.monotonic())

    def failed(self) -> float:
        """Record one failure (a failed start or a dead connection); returns the delay before the next attempt."""
        self.failures += 1
        delay = self.delay()
        self.retry_at = time.monotonic() + delay
        return delay

    def succeeded(self) -> None:
        self.failures = 0
        self.retry_at = 0.0
