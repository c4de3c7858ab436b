"""CPU work off the event loop, at most N at once, that a deadline can abandon safely.

``anyio.to_thread.run_sync(..., limiter=..., abandon_on_cancel=True)`` gives the limiter's
token back the moment the caller is cancelled, while the thread keeps computing: under
overload every request then misses its deadline, abandoned threads pile up, and all CPU goes
to answers nobody waits for. Here the slot is a semaphore taken *inside* the thread and
released only when the work really ends, and a thread whose caller has already given up
skips the work instead of starting it; work already started stops at its next
``checkpoints.checkpoint()`` once its caller gives up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio.from_thread
import anyio.to_thread

from tool_selector.ranking.checkpoints import checked

T = TypeVar("T")
A = TypeVar("A")
_POLL_SECONDS = 0.05


class WorkerPool:
    """At most ``size`` functions run at once; callers may be cancelled at any time."""

    def __init__(self, size: int) -> None:
        self._slots = threading.BoundedSemaphore(size)

    async def run(self, fn: Callable[[A], T], arg: A) -> T:
        """Run ``fn(arg)`` in a worker thread; cancellation returns at once."""
        return await anyio.to_thread.run_sync(self._bounded, fn, arg, abandon_on_cancel=True)

    def _bounded(self, fn: Callable[[A], T], arg: A) -> T:
        while not self._slots.acquire(timeout=_POLL_SECONDS):
            anyio.from_thread.check_cancelled()
        try:
            anyio.from_thread.check_cancelled()
            with checked(anyio.from_thread.check_cancelled):
                return fn(arg)
        finally:
            self._slots.release()
