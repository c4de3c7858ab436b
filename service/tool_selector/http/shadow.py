"""Service-side shadow compare (``TOOL_SELECTOR_SHADOW=relevance``).

After a search has been answered, the proxy's local keyword ``relevance`` scorer ranks the
same request off the event loop and the agreement with our answer is exported as metrics.
Shadow work never changes or slows the answer: it is queued (without blocking) by a
background task after the response is sent, computed on its own single thread, its errors
are swallowed and counted, and when the queue is full new comparisons are skipped (and
counted).
"""

from __future__ import annotations

import queue
import threading
import time

from litestar.background_tasks import BackgroundTask

from tool_selector.metrics import ShadowMetrics
from tool_selector.pipeline.ask import Ask
from tool_selector.ranking.catalog import Catalog
from tool_selector_client.compare import Agreement, agreement
from tool_selector_client.relevance import relevance_select


def relevance_picks(request: Ask, catalog: Catalog) -> list[str]:
    """The relevance scorer's picks for ``request`` over the tools of its ``catalog``.

    The catalog, not ``request.tools``: a resent tool list is not decoded again, and the
    catalog already has duplicates merged (first wins) and each description resolved (the
    top-level one, else the definition's).
    """
    tools = [(t.name, t.description) for t in catalog.texts]
    return relevance_select(request.pattern, tools, request.top_k)


class ShadowCompare:
    """Computes and records the comparison for each answered search, on its own thread.

    ``task`` returns a Litestar background task that only enqueues the work (it runs after
    the response is sent and returns at once, so the connection is not held); one daemon
    thread, started on first use, drains the queue. The comparison is pure Python and holds
    the GIL (about 20 ms for 1,000 tools), so the thread rests after each one to stay busy at
    most ``max_busy`` of the time; comparisons that find the queue full are skipped.
    """

    def __init__(
        self, metrics: ShadowMetrics, max_pending: int = 64, max_busy: float = 0.1
    ) -> None:
        self.metrics = metrics
        self._queue: queue.Queue[tuple[Ask, Catalog, list[str]] | None] = queue.Queue(max_pending)
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()
        self._rest_per_busy = (1 - max_busy) / max_busy
        self._closing = threading.Event()

    def compare(self, request: Ask, catalog: Catalog, selected: list[str]) -> Agreement:
        """Compare ``selected`` (our answer) with relevance's picks and record it."""
        started = time.perf_counter()
        forced = {n for n in request.always_keep if n in catalog.positions}
        result = agreement(selected, relevance_picks(request, catalog), forced)
        m = self.metrics
        m.comparisons.inc()
        m.top1.labels(
            "not_comparable" if result.top1 is None else "agree" if result.top1 else "disagree"
        ).inc()
        if result.overlap is not None:
            m.overlap.observe(result.overlap)
        if result.jaccard is not None:
            m.jaccard.observe(result.jaccard)
        m.abstain.labels(result.abstain).inc()
        m.seconds.observe(time.perf_counter() - started)
        return result

    def task(self, request: Ask, catalog: Catalog, selected: list[str]) -> BackgroundTask:
        """A background task that hands the comparison to the shadow thread.

        It is a coroutine on purpose: Litestar runs a sync background task on the event
        loop's default executor, a thread hop per answer that waits when those threads are
        busy; ``submit`` never blocks, so it runs on the loop.
        """
        return BackgroundTask(self._enqueue, request, catalog, list(selected))

    async def _enqueue(self, request: Ask, catalog: Catalog, selected: list[str]) -> None:
        self.submit(request, catalog, selected)

    def submit(self, request: Ask, catalog: Catalog, selected: list[str]) -> bool:
        """Queue one comparison; False (and counted as skipped) when the queue is full."""
        self._ensure_worker()
        try:
            self._queue.put_nowait((request, catalog, selected))
        except queue.Full:
            self.metrics.skipped.inc()
            return False
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop the shadow thread after the queued comparisons (done without resting)."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            self._closing.set()
            self._queue.put(None)
            worker.join(timeout)

    def _ensure_worker(self) -> None:
        with self._lock:
            if self._worker is None:
                self._closing.clear()
                self._worker = threading.Thread(target=self._drain, name="shadow", daemon=True)
                self._worker.start()

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            started = time.perf_counter()
            try:
                self.compare(*item)
            except Exception:  # shadow errors never surface; they are counted
                self.metrics.errors.inc()
            self._rest((time.perf_counter() - started) * self._rest_per_busy)

    def _rest(self, seconds: float) -> None:
        self._closing.wait(seconds)
