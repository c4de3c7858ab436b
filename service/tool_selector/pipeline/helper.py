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

import threading
from concurrent.futures import ThreadPoolExecutor


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
