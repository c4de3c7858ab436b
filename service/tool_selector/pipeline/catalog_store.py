"""Reuse across requests: built catalogs, stacked tool-embedding matrices, query vectors, and
the background embedding work behind the bounded cold path.

- ``CatalogCache``: LRU of catalogs keyed by a fingerprint of the (deduplicated) tools,
  bounded by the total number of tools held. An entry keeps the built ``Catalog`` (texts,
  BM25 index) and, once every tool is embedded, the stacked embedding matrix per model.
- ``QueryCache``: LRU of query embeddings keyed by (model id, pattern).
- ``EmbeddingJobs``: at most one embedding job per catalog fingerprint (deduplicated), run
  inline when predicted to fit the request's deadline, otherwise on a background thread fed by
  a bounded queue (dropped, and counted, when full) that runs the most-asked catalog first.
  Startup warm-up yields to that work between chunks (``yield_to_asked``). It keeps a moving
  average of the encoder's seconds per text to make the inline prediction.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec
import numpy as np

from tool_selector.embeddings.cache import embedding_key
from tool_selector.errors import EmbeddingStopped
from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.text import TEXT_FORMAT_VERSION
from tool_selector_client.wire import Tool

_log = logging.getLogger("tool_selector.embedding_jobs")
_ENCODE = msgspec.json.Encoder(order="deterministic")

JobEvent = Literal["inline", "queued", "dropped", "done", "failed"]


def fingerprint(unique_tools: Sequence[Tool]) -> str:
    """Identity of a deduplicated tool list: blake2b of its canonical JSON (order matters)."""
    return hashlib.blake2b(_ENCODE.encode(unique_tools), digest_size=16).hexdigest()


@dataclass(slots=True)
class CatalogEntry:
    """A built catalog plus what reuse adds: dense texts, embedding keys and matrix per model.

    ``duplicates``: tool entries dropped (duplicate names) from the list it was built from;
    a request resending that list byte for byte has the same number.
    """

    catalog: Catalog
    dense_texts: list[str]
    duplicates: int = 0
    _keys: dict[str, list[bytes]] = field(default_factory=dict)
    _matrices: dict[str, FloatArray] = field(default_factory=dict)

    @classmethod
    def of(cls, catalog: Catalog, duplicates: int = 0) -> CatalogEntry:
        return cls(
            catalog=catalog,
            dense_texts=[t.dense_text() for t in catalog.texts],
            duplicates=duplicates,
        )

    def alias(self, duplicates: int) -> CatalogEntry:
        """The same built catalog for another byte-level spelling of its tool list.

        Texts, index, embedding keys and matrices are shared (a matrix set on one is set on
        both); only the duplicate count, which belongs to a list's own bytes, is its own.
        """
        return CatalogEntry(
            catalog=self.catalog,
            dense_texts=self.dense_texts,
            duplicates=duplicates,
            _keys=self._keys,
            _matrices=self._matrices,
        )

    def keys(self, model_id: str) -> list[bytes]:
        """Embedding-cache keys of the tool texts for ``model_id`` (computed once)."""
        keys = self._keys.get(model_id)
        if keys is None:
            keys = [embedding_key(model_id, TEXT_FORMAT_VERSION, t) for t in self.dense_texts]
            self._keys[model_id] = keys
        return keys

    def matrix(self, model_id: str) -> FloatArray | None:
        return self._matrices.get(model_id)

    def set_matrix(self, model_id: str, matrix: FloatArray) -> None:
        matrix.setflags(write=False)
        self._matrices[model_id] = matrix


class CatalogCache:
    """LRU of ``CatalogEntry`` by fingerprint, bounded by the total tools held (0 = off)."""

    def __init__(self, max_tools: int) -> None:
        self._max_tools = max_tools
        self._tools = 0
        self._items: OrderedDict[str, CatalogEntry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> CatalogEntry | None:
        with self._lock:
            entry = self._items.get(key)
            if entry is not None:
                self._items.move_to_end(key)
            return entry

    def put(self, key: str, entry: CatalogEntry) -> CatalogEntry:
        """Store ``entry`` unless another thread stored one first; return the stored one."""
        size = _weight(entry)
        with self._lock:
            existing = self._items.get(key)
            if existing is not None:
                return existing
            if size > self._max_tools:
                return entry
            self._items[key] = entry
            self._tools += size
            while self._tools > self._max_tools:
                _, evicted = self._items.popitem(last=False)
                self._tools -= _weight(evicted)
            return entry


def _weight(entry: CatalogEntry) -> int:
    """An entry's share of the bound: its tools, and at least 1 (empty catalogs cost memory
    too: counted as 0, distinct empty lists could fill the cache without limit)."""
    return max(1, len(entry.catalog))


class QueryCache:
    """LRU of query embeddings keyed by (model id, pattern), bounded by count (0 = off)."""

    def __init__(self, max_items: int) -> None:
        self._max = max_items
        self._items: OrderedDict[tuple[str, str], FloatArray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, model_id: str, pattern: str) -> FloatArray | None:
        with self._lock:
            vec = self._items.get((model_id, pattern))
            if vec is not None:
                self._items.move_to_end((model_id, pattern))
            return vec

    def put(self, model_id: str, pattern: str, vec: FloatArray) -> None:
        if self._max <= 0:
            return
        vec.setflags(write=False)
        with self._lock:
            self._items[(model_id, pattern)] = vec
            self._items.move_to_end((model_id, pattern))
            while len(self._items) > self._max:
                self._items.popitem(last=False)


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
        seconds_per_text: float = 0.015,
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
        self._seconds_per_text = seconds_per_text
        self._thread: threading.Thread | None = None

    @property
    def depth(self) -> int:
        """Background jobs queued or running."""
        with self._lock:
            return sum(1 for j in self._inflight.values() if j.background)

    def estimate(self, texts: int) -> float:
        """Predicted seconds to encode ``texts`` tool texts on this machine."""
        return texts * self._seconds_per_text

    def observe(self, texts: int, seconds: float) -> None:
        """Feed a measured encode into the moving average (batches of 8+ only)."""
        if texts >= 8:
            self._seconds_per_text += 0.3 * (seconds / texts - self._seconds_per_text)

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
        _lower_priority()
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


def _lower_priority() -> None:
    """Nice this thread (Linux: per-thread), so background embedding yields CPU to requests."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not permitted
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def stack(rows: Sequence[FloatArray | None], dim: int) -> FloatArray:
    """Rows stacked into one (n, dim) float32 matrix; ``None`` rows become zeros."""
    matrix = np.zeros((len(rows), dim), dtype=np.float32)
    for i, vec in enumerate(rows):
        if vec is not None:
            matrix[i] = vec
    return matrix
