"""A small circuit breaker: after N failed calls in a row, skip the service for a cooldown.

closed --N consecutive failures--> open --cooldown elapsed--> half-open (one probe call)
half-open --probe healthy--> closed; half-open --probe failed--> open again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    """Thread-safe consecutive-failure breaker; ``threshold=0`` disables it."""

    def __init__(
        self,
        threshold: int = 5,
        cooldown_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half-open``."""
        with self._lock:
            if self._open_until is None:
                return "closed"
            return "open" if self._clock() < self._open_until else "half-open"

    def allow(self) -> bool:
        """Whether a call may go out now (in half-open, only one probe at a time)."""
        with self._lock:
            if self._open_until is None:
                return True
            if self._clock() < self._open_until or self._probing:
                return False
            self._probing = True
            return True

    def record(self, healthy: bool) -> None:
        """Report the result of an allowed call."""
        with self._lock:
            self._probing = False
            if healthy:
                self._failures = 0
                self._open_until = None
                return
            self._failures += 1
            if self.threshold and (
                self._open_until is not None or self._failures >= self.threshold
            ):
                self._open_until = self._clock() + self.cooldown_s
