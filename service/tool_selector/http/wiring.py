"""Builds the selector and its caches from settings and wires them to the metrics.

Kept apart from ``app.py`` so the app factory stays wiring-only and short.
"""

from __future__ import annotations

import gc
import logging
import time
from pathlib import Path

import msgspec
from threadpoolctl import threadpool_limits

from tool_selector.embeddings.breaker import BreakerState
from tool_selector.embeddings.cache import (
    CacheObserver,
    EmbeddingCache,
    MemoryCache,
    NullCache,
    TieredCache,
)
from tool_selector.errors import ConfigError
from tool_selector.metrics import Metrics
from tool_selector.pipeline.catalog_store import CatalogCache, EmbeddingJobs, JobEvent, QueryCache
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import Tool


class _WarmupLine(msgspec.Struct):
    tools: list[Tool]


def build_selector(settings: Settings, metrics: Metrics) -> Selector:
    """The selector the settings describe, with every cache reporting to ``metrics``."""

    def observe(tier: str, hits: int, misses: int) -> None:
        if hits:
            metrics.cache.labels(tier, "hit").inc(hits)
        if misses:
            metrics.cache.labels(tier, "miss").inc(misses)

    def on_job(event: JobEvent) -> None:
        metrics.embedding_jobs.labels(event).inc()

    cache = build_cache(settings, metrics, observe)
    jobs = EmbeddingJobs(max_queued=settings.embed_queue_size, on_event=on_job)
    metrics.embedding_queue_depth.set_function(lambda: jobs.depth)
    kind: type[Selector] = Selector
    if settings.pipeline == "naive":
        from tool_selector.offline.naive import NaiveSelector  # noqa: PLC0415

        kind = NaiveSelector
    return kind(
        cache=cache,
        catalogs=CatalogCache(settings.catalog_cache_tools),
        queries=QueryCache(settings.query_cache_size),
        jobs=jobs,
        embed_deadline=settings.embed_deadline_ms / 1000,
        batch_size=settings.embed_batch_size,
    )


def build_cache(
    settings: Settings,
    metrics: Metrics,
    observer: CacheObserver | None = None,
) -> EmbeddingCache:
    """Memory tier (if it has bytes), Redis tier (if a URL is set), tiered when both."""
    near: EmbeddingCache = (
        MemoryCache(settings.embed_cache_bytes, observer)
        if settings.embed_cache_bytes
        else NullCache()
    )
    if not settings.redis_url:
        return near
    from tool_selector.embeddings.redis_cache import RedisCache  # noqa: PLC0415

    def on_breaker(state: BreakerState) -> None:
        metrics.redis_breaker_transitions.labels(state).inc()
        metrics.redis_breaker_open.set(1 if state == "open" else 0)
        logging.getLogger("tool_selector.redis").warning(
            "redis circuit breaker %s", state, extra={"breaker": state}
        )

    far = RedisCache(
        settings.redis_url,
        timeout=settings.redis_timeout_ms / 1000,
        ttl_seconds=settings.redis_ttl_seconds,
        write_queue=settings.redis_write_queue,
        breaker_threshold=settings.redis_breaker_failures,
        breaker_reset=settings.redis_breaker_reset_ms / 1000,
        on_breaker=on_breaker,
        on_drop=metrics.redis_writes_dropped.inc,
        observer=observer,
    )
    return TieredCache(near, far)


def read_warmup(path: Path) -> list[list[Tool]]:
    """Catalogs of a warm-up file: one JSON object ``{"tools": [...]}`` per line."""
    decoder = msgspec.json.Decoder(_WarmupLine)
    catalogs: list[list[Tool]] = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise ConfigError(f"TOOL_SELECTOR_WARMUP_FILE={path}: {exc.strerror}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            catalogs.append(decoder.decode(line).tools)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"TOOL_SELECTOR_WARMUP_FILE={path} line {number}: {exc}") from exc
    return catalogs


def warm_up(selector: Selector, path: Path) -> None:
    """Embed every catalog of the warm-up file now, logging progress (blocks until done)."""
    logger = logging.getLogger("tool_selector.warmup")
    catalogs = read_warmup(path)
    started = time.perf_counter()
    for n, tools in enumerate(catalogs, 1):
        encoded = selector.warm(tools)
        logger.info(
            "warm-up %d/%d: %d tools, %d encoded (%.1fs)",
            n,
            len(catalogs),
            len(tools),
            encoded,
            time.perf_counter() - started,
        )
    selector.cache.flush(10.0)


def limit_blas_threads(threads: int) -> None:
    """Cap the threads of the BLAS libraries loaded so far (``threadpoolctl``); 0 leaves them
    alone. Process-wide and permanent, but blind to libraries loaded later: the app calls it
    before serving and again once the encoder (which may load SciPy's own BLAS) is in."""
    if threads:
        threadpool_limits(limits=threads, user_api="blas")


def settle_heap() -> None:
    """Collect once, then move every object alive now (model, modules, warm catalogs) out of
    the garbage collector's reach (``gc.freeze``). A full collection over them took 60-80 ms
    with a 4,000-tool catalog warm, which showed up as p99 spikes on warm requests."""
    gc.collect()
    gc.freeze()
