"""The shared embedding tier: Redis, guarded so that a slow, hung or dead Redis never slows
a request.

- Reads: ``MGET`` in batches of 512 keys, each with a tight socket timeout (tens of ms) and
  no retries (redis-py 8's defaults retry with backoff and stall ~58 s on a hung server).
- Writes: never on the request path. ``put_many`` enqueues onto a bounded queue (dropping,
  and counting, when full); one writer thread pipelines ``SET .. EX``.
- A circuit breaker opens after a few consecutive failures; while open, reads miss at once
  and writes are dropped. The writer thread probes with ``PING`` and closes it again.

Values are the raw little-endian float32 bytes of the vector (1,536 bytes for 384 dims). A
value read back is a vector only when it is exactly that (4 bytes a dimension of the model
asking) and every float is finite: anything else (written by hand, by another program, cut
short) reads as a miss, so it is re-embedded and overwritten, and is logged at most once a
minute (``logs.LOG_EVERY``). Trusted, one bad vector broke its catalog on every replica until the
key expired.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence

import numpy as np

from tool_selector.embeddings.breaker import BreakerState, CircuitBreaker
from tool_selector.errors import MissingDependencyError
from tool_selector.logs import Throttle
from tool_selector.ranking.dense import FloatArray

KEY_PREFIX = b"tool-selector:emb:"
#: Keys per MGET: bounds one call's reply (~800 KB) so the per-call timeout stays meaningful.
MGET_BATCH = 512
_log = logging.getLogger("tool_selector.redis")
_STOP = object()


def _vector(value: object, dim: int) -> FloatArray | None:
    """``value`` as a vector of ``dim`` finite float32s, or ``None`` when it is not one."""
    if not isinstance(value, bytes) or len(value) != 4 * dim:
        return None
    vec = np.frombuffer(value, dtype="<f4").astype(np.float32)
    return vec if np.isfinite(vec).all() else None


class RedisCache:
    """Embedding cache on a Redis server (shared by every replica pointing at it)."""

    name = "redis"

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 0.05,
        ttl_seconds: int = 7 * 24 * 3600,
        write_queue: int = 10_000,
        breaker_threshold: int = 3,
        breaker_reset: float = 1.0,
        on_breaker: Callable[[BreakerState], None] | None = None,
        on_drop: Callable[[int], None] | None = None,
        observer: Callable[[str, int, int], None] | None = None,
    ) -> None:
        try:
            import redis  # noqa: PLC0415
            from redis.backoff import NoBackoff  # noqa: PLC0415
            from redis.retry import Retry  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - redis is a runtime dependency
            raise MissingDependencyError("redis", "pip install redis") from exc
        self._client = redis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
            health_check_interval=0,
            max_connections=64,
        )
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._answered: tuple[type[BaseException], ...] = (redis.ResponseError,)  # reachable
        self._ttl = ttl_seconds
        self.breaker = CircuitBreaker(breaker_threshold, breaker_reset, on_breaker)
        self._on_drop = on_drop
        self._observer = observer
        self._queue: queue.Queue[object] = queue.Queue(maxsize=write_queue)
        self._pending = 0
        self._idle = threading.Condition()
        self._bad, self._refused = Throttle(), Throttle()
        self._writer = threading.Thread(target=self._write_loop, name="redis-writer", daemon=True)
        self._writer.start()

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize()

    def get_many(self, keys: Sequence[bytes], dim: int) -> list[FloatArray | None]:
        """Vectors of ``dim`` floats for ``keys`` (``None`` = miss). Any Redis trouble reads as
        all-miss; a value that is no such vector, as a miss (counted with the misses)."""
        out: list[FloatArray | None] = [None] * len(keys)
        for start in range(0, len(keys), MGET_BATCH):
            if not self.breaker.allow():
                break
            try:
                raw = self._client.mget([KEY_PREFIX + k for k in keys[start : start + MGET_BATCH]])
            except self._errors:
                self.breaker.failure()
                break  # the rest read as misses; the next request tries again
            self.breaker.success()
            out[start : start + len(raw)] = [_vector(value, dim) for value in raw]
            self._check_bad(raw, out[start : start + len(raw)], dim)
        if self._observer and keys:
            hits = sum(v is not None for v in out)
            self._observer(self.name, hits, len(keys) - hits)
        return out

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        """Queue the vectors for the writer thread; never blocks, drops when full or open."""
        if not items:
            return
        if not self.breaker.allow():
            self._dropped(len(items))
            return
        payload = [(KEY_PREFIX + k, np.asarray(v, dtype="<f4").tobytes()) for k, v in items]
        with self._idle:
            self._pending += 1
        try:
            self._queue.put_nowait(payload)
        except queue.Full:
            self._done()
            self._dropped(len(items))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until queued writes are sent (or dropped); True if the queue drained in time."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        """Stop the writer thread and close the connections."""
        self._queue.put(_STOP)
        self._writer.join(2)
        self._client.close()

    def _check_bad(self, raw: Sequence[object], got: Sequence[FloatArray | None], dim: int) -> None:
        """Log (at most once a minute) the values found that were no vector of ``dim``."""
        bad = sum(value is not None and vec is None for value, vec in zip(raw, got, strict=True))
        if bad and (count := self._bad.due(bad)):
            _log.warning(
                "redis: %d cached value(s) were not %d finite float32s (%d bytes); read as "
                "misses, re-embedded and overwritten",
                count,
                dim,
                4 * dim,
                extra={"bad_vectors": count},
            )

    def _dropped(self, n: int) -> None:
        if self._on_drop:
            self._on_drop(n)

    def _done(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()

    def _write_loop(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=0.2)
            except queue.Empty:
                self._maybe_probe()
                continue
            if item is _STOP:
                return
            try:
                self._write(item)  # type: ignore[arg-type]
            finally:
                self._done()
            self._maybe_probe()

    def _write(self, payload: list[tuple[bytes, bytes]]) -> None:
        if not self.breaker.allow():
            self._dropped(len(payload))
            return
        try:
            pipe = self._client.pipeline(transaction=False)
            for key, value in payload:
                pipe.set(key, value, ex=self._ttl)
            # unannotated: redis-py's own raise prints the command, binary key and vector
            refused = [r for r in pipe.execute(raise_on_error=False) if isinstance(r, Exception)]
            if refused:
                raise refused[0]
        except self._errors as exc:
            if not isinstance(exc, self._answered):  # a refusal Redis answers (out of memory):
                self.breaker.failure()  # it is reachable and its reads still serve
            self._dropped(len(payload))
            if count := self._refused.due():
                _log.warning(
                    "redis: %d write batch(es) of embeddings dropped since the last line: %s",
                    count,
                    exc,
                    extra={"dropped_batches": count},
                )
        else:
            self.breaker.success()

    def _maybe_probe(self) -> None:
        if not self.breaker.probe_due():
            return
        try:
            self._client.ping()
        except self._errors:
            self.breaker.failure()
        else:
            _log.info("redis is reachable again; closing the circuit breaker")
            self.breaker.success()
