"""Background embedding work behind the bounded cold path.

``EmbeddingJobs``: at most one embedding job per catalog (deduplicated), run inline when
predicted to fit the request's deadline, otherwise on a background thread fed by a bounded
queue (dropped, and counted, when full) that runs the most-asked catalog first. Startup
warm-up yields to that work between chunks (``yield_to_asked``). It keeps a moving average of
each model's seconds per character of tool text to predict what an encode will cost (the
inline embedding of a small catalog, the shortlist's leaders).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Literal

from tool_selector.errors import EmbeddingStopped
from tool_selector.ranking.dense import FloatArray

_log = logging.getLogger("tool_selector.embedding_jobs")

JobEvent = Literal["inline", "queued", "dropped", "done", "failed"]

#: Seconds per character of tool text before a model's first batch is measured: above the
#: slowest rate seen (bge-small on a 2 GHz AMD EPYC, 0.29-0.39 ms; MiniLM about half). A
#: request embeds a catalog itself when predicted to fit its deadline: a low guess would
#: overrun it.
SECONDS_PER_CHAR = 0.0004
#: Characters of one text counted at most: bge-small reads 512 tokens of it (about 2,000
#: characters); MiniLM's 256 make its longest texts predicted above their cost, the safe side.
MAX_CHARS = 2048


def text_chars(texts: list[str]) -> int:
    """The characters of ``texts`` an encode is predicted by (each counted to ``MAX_CHARS``)."""
    lengths = list(map(len, texts))
    if lengths and max(lengths) > MAX_CHARS:
        return sum(min(n, MAX_CHARS) for n in lengths)
    return sum(lengths)


class Job:
    """One catalog's embedding work; requests for the same catalog share it."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.background = False
        #: Requests that found this job in flight (its owner included): the queue's priority.
        self.asks = 1
        self.result: FloatArray | None = None
        self._done = threading.Event()

    def finish(self, result: FloatArray | None) -> None:
        self.result = result
        self._done.set()

    def wait(self, timeout: float) -> FloatArray | None:
        """The matrix if the job finished within ``timeout`` seconds, else ``None``."""
        if timeout <= 0 and not self._done.is_set():
            return None
        self._done.wait(max(timeout, 0.0))
        return self.result


class EmbeddingJobs:
    """Deduplicated embedding jobs: inline when they fit a deadline, else background."""

    def __init__(
        self,
        max_queued: int = 64,
        seconds_per_char: float = SECONDS_PER_CHAR,
        on_event: Callable[[JobEvent], None] | None = None,
    ) -> None:
        self._max_queued = max(max_queued, 1)
        self._pending: list[tuple[Job, Callable[[], FloatArray]]] = []
        #: Set by ``close``: long tasks call ``checkpoint`` between chunks and stop.
        self.closing = threading.Event()
        self._inflight: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._on_event = on_event
        self._default_rate = seconds_per_char
        self._rates: dict[str, float] = {}
        self._thread: threading.Thread | None = None

    @property
    def depth(self) -> int:
        """Background jobs queued or running."""
        with self._lock:
            return sum(1 for j in self._inflight.values() if j.background)

    def estimate(self, model: str, texts: list[str]) -> float:
        """Predicted seconds for ``model`` to encode ``texts`` on this machine: their
        characters (``text_chars``) at its measured rate. A rate per model, per character:
        on our sets' tool texts, batches of ten took 0.17-0.18 ms a character with MiniLM
        and 0.29-0.39 with bge-small, against 25-88 ms a text (docs/performance.md, "What
        the prediction reads")."""
        return text_chars(texts) * self.rate(model)

    def rate(self, model: str) -> float:
        """``model``'s seconds per character now (the default before any measure)."""
        with self._lock:
            return self._rates.get(model, self._default_rate)

    def observe(self, model: str, texts: list[str], seconds: float) -> None:
        """Feed ``model``'s measured encode of ``texts`` into its moving average (batches of
        8+ texts only: a lone short text's cost is mostly the model's fixed work; a time of
        0 or less is no measure). The first measure is the rate; later ones move it by 30%."""
        chars = text_chars(texts)
        if len(texts) < 8 or not chars or seconds <= 0:
            return
        measured = seconds / chars
        with self._lock:
            rate = self._rates.get(model, measured)  # the first measure replaces the default
            self._rates[model] = rate + 0.3 * (measured - rate)

    def claim(self, key: str) -> tuple[Job, bool]:
        """The job for ``key``, and True when the caller created it (and must run or queue it)."""
        with self._lock:
            job = self._inflight.get(key)
            if job is not None:
                job.asks += 1
                return job, False
            job = self._inflight[key] = Job(key)
            return job, True

    def run_inline(self, job: Job, task: Callable[[], FloatArray]) -> FloatArray:
        """Run ``task`` in the calling thread for ``job`` (its owner); waiters get the result."""
        self._emit("inline")
        result: FloatArray | None = None
        try:
            result = task()
            return result
        finally:
            self._release(job, result)

    def enqueue(self, job: Job, task: Callable[[], FloatArray]) -> bool:
        """Queue ``task`` for the background thread; False (job dropped) when the queue is full."""
        job.background = True
        with self._lock:  # close() sets ``closing`` under it: no job slips in behind its drain
            closing = self.closing.is_set()
            queued = not closing and len(self._pending) < self._max_queued
            if queued:
                self._pending.append((job, task))
                self._wake.notify()
        if not queued:
            self._release(job, None)
            if not closing:
                self._emit("dropped")
            return False
        self._emit("queued")
        self._ensure_thread()
        return True

    def drain(self, timeout: float) -> bool:
        """Wait until no background job is queued or running (tests, warm-up)."""
        deadline = time.monotonic() + timeout
        while self.depth and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.depth == 0

    def yield_to_asked(self) -> None:
        """Wait while a catalog some request asked for is queued or being embedded (warm-up
        calls it between chunks: a catalog asked right now goes before one from a file)."""
        while self.depth and not self.closing.is_set():
            self.closing.wait(0.05)

    def checkpoint(self) -> None:
        """Raise ``EmbeddingStopped`` once ``close`` was called (tasks call it between chunks)."""
        if self.closing.is_set():
            raise EmbeddingStopped("embedding stopped: shutting down")

    def close(self, timeout: float = 5.0) -> bool:
        """Stop background embedding: queued jobs are dropped, the running one stops after its
        current chunk, and the worker thread is joined (True if it ended within ``timeout``).

        A daemon thread still inside ONNX Runtime when the interpreter exits aborts the
        process (``terminate called without an active exception``), so shutdown waits here.
        """
        with self._lock:
            self.closing.set()
            pending, self._pending = self._pending, []
            thread = self._thread
            self._wake.notify_all()
        for job, _ in pending:
            self._release(job, None)
        dropped = len(pending)
        if thread is not None:
            thread.join(timeout)
        stopped = thread is None or not thread.is_alive()
        _log.info(
            "embedding jobs closed: %d queued catalogs dropped, worker %s",
            dropped,
            "stopped" if stopped else f"still busy after {timeout:g}s",
        )
        return stopped

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None and not self.closing.is_set():
                self._thread = threading.Thread(
                    target=self._work, name="embedding-jobs", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        lower_priority()
        while (item := self._next()) is not None:
            job, task = item
            result: FloatArray | None = None
            try:
                result = task()
                self._emit("done")
            except EmbeddingStopped:
                return
            except Exception:  # a failed job must not kill the worker; the next request retries
                _log.exception("background embedding failed")
                self._emit("failed")
            finally:
                self._release(job, result)

    def _next(self) -> tuple[Job, Callable[[], FloatArray]] | None:
        """The queued job asked by the most requests (the oldest among equals); ``None`` once
        closing."""
        with self._wake:
            while not self._pending and not self.closing.is_set():
                self._wake.wait()
            if self.closing.is_set():
                return None
            best = max(range(len(self._pending)), key=lambda i: (self._pending[i][0].asks, -i))
            return self._pending.pop(best)

    def _release(self, job: Job, result: FloatArray | None) -> None:
        with self._lock:
            if self._inflight.get(job.key) is job:
                del self._inflight[job.key]
        job.finish(result)

    def _emit(self, event: JobEvent) -> None:
        if self._on_event:
            self._on_event(event)


def lower_priority() -> None:
    """Nice this thread (Linux: per-thread), so background embedding yields CPU to requests."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not permitted
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
