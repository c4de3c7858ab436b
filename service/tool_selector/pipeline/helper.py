"""The helper thread: one thread beside the requests' own, where a second model encodes while
the first encodes in the request's thread (ONNX Runtime leaves the GIL, so the idle core takes
it).

One request at a time has it: a request takes it only while no other request is encoding, so
two requests never wait on one helper, and one that finds it taken encodes its models one
after the other in its own thread. ``QueryVectors`` lends it to a new pattern's query vectors,
``ToolVectors.rows`` to a new catalog's leaders (the shortlist); one ``Helper`` serves both,
so they count each other's encodes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

A = TypeVar("A")
B = TypeVar("B")


class Helper:
    """The helper thread and how many requests are encoding now (thread-safe)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._encoding, self._lock = 0, threading.Lock()

    def enter(self) -> ThreadPoolExecutor | None:
        """Count one more request encoding; the helper when it is the only one (else
        ``None``: encode in the request's thread). ``leave`` once done either way."""
        with self._lock:
            self._encoding += 1
            return self._thread() if self._encoding == 1 else None

    def take(self) -> ThreadPoolExecutor | None:
        """The helper, counted as one more request encoding, when no request is encoding
        now; else ``None`` and nothing counted. ``leave`` once done when it was given."""
        with self._lock:
            if self._encoding:
                return None
            self._encoding += 1
            return self._thread()

    def leave(self) -> None:
        """One request fewer encoding."""
        with self._lock:
            self._encoding -= 1

    def _thread(self) -> ThreadPoolExecutor:
        """The helper thread (made on first use; call under the lock)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="query-encode")
        return self._pool


def side_by_side(
    helper: ThreadPoolExecutor | None, first: Callable[[], A], rest: Sequence[Callable[[], B]]
) -> tuple[A, list[B]]:
    """``first()`` in this thread and each of ``rest`` on ``helper`` meanwhile (without a
    helper, or one shut down, here after ``first``, in turn). Whatever went to the helper is
    waited for even when ``first`` fails, so the helper is idle once the caller leaves it."""
    later: list[Future[B]] = []
    if helper is not None:
        with contextlib.suppress(RuntimeError):  # shut down (the interpreter exiting)
            later.extend(helper.submit(job) for job in rest)
    try:
        got = first()
    finally:
        wait(later)
    return got, [f.result() for f in later] + [job() for job in rest[len(later) :]]
