"""A circuit breaker for the shared cache tier.

closed -> (``threshold`` consecutive failures) -> open -> (a background probe succeeds after
``reset_after`` seconds) -> closed. While open every call is refused at once, so a dead or
hung Redis costs a request nothing; the probe runs off the request path (the cache's writer
thread), so no request ever pays for finding out whether Redis is back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

BreakerState = Literal["closed", "open"]


class CircuitBreaker:
    """Counts consecutive failures; opens at ``threshold``; closes on a successful probe."""

    def __init__(
        self,
        threshold: int = 3,
        reset_after: float = 1.0,
        on_change: Callable[[BreakerState], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._threshold = threshold
        self._reset_after = reset_after
        self._on_change = on_change
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at = 0.0
        self._state: BreakerState = "closed"

    @property
    def state(self) -> BreakerState:
        return self._state

    def allow(self) -> bool:
        """True when calls may go through (closed)."""
        return self._state == "closed"

    def probe_due(self) -> bool:
        """True when open long enough that the background prober should try again."""
        return self._state == "open" and self._clock() - self._opened_at >= self._reset_after

    def try_probe(self) -> bool:
        """True for the one caller that may probe now (open long enough): the timer is
        re-armed in the same step, so the callers beside it keep being refused."""
        with self._lock:
            now = self._clock()
            if self._state != "open" or now - self._opened_at < self._reset_after:
                return False
            self._opened_at = now
            return True

    def success(self) -> None:
        """A call (or probe) succeeded: reset the count and close."""
        with self._lock:
            self._failures = 0
            changed = self._state != "closed"
            self._state = "closed"
        if changed and self._on_change:
            self._on_change("closed")

    def failure(self) -> None:
        """A call failed: count it; open at the threshold (re-arm the timer if already open)."""
        with self._lock:
            self._failures += 1
            if self._failures < self._threshold and self._state == "closed":
                return
            changed = self._state != "open"
            self._state = "open"
            self._opened_at = self._clock()
        if changed and self._on_change:
            self._on_change("open")
