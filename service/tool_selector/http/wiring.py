"""Builds the selector and its caches from settings and wires them to the metrics.

Kept apart from ``app.py`` so the app factory stays wiring-only and short.
"""

from __future__ import annotations

import logging

from tool_selector.embeddings.breaker import BreakerState
from tool_selector.embeddings.cache import (
    CacheObserver,
    EmbeddingCache,
    MemoryCache,
    NullCache,
    TieredCache,
)
from tool_selector.lru import BoundedLRU
from tool_selector.metrics import Metrics
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.jobs import EmbeddingJobs, JobEvent
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.ranking.glossary import default_glossary
from tool_selector.ranking.language import glossary_forms
from tool_selector.settings import Settings


def build_selector(
    settings: Settings, metrics: Metrics, kind: type[Selector] = Selector
) -> Selector:
    """The selector the settings describe (of ``kind``), every cache reporting to ``metrics``."""

    def observe(tier: str, hits: int, misses: int) -> None:
        if hits:
            metrics.cache.labels(tier, "hit").inc(hits)
        if misses:
            metrics.cache.labels(tier, "miss").inc(misses)

    def on_job(event: JobEvent) -> None:
        metrics.embedding_jobs.labels(event).inc()

    cache = build_cache(settings, metrics, observe)
    glossary_forms()  # the language test's table (and the glossary), read now, not on a request
    jobs = EmbeddingJobs(max_queued=settings.embed_queue_size, on_event=on_job)
    metrics.embedding_queue_depth.set_function(lambda: jobs.depth)
    return kind(
        cache=cache,
        catalogs=CatalogStore(settings.catalog_cache_tools),
        queries=BoundedLRU(settings.query_cache_size),
        jobs=jobs,
        embed_deadline=settings.embed_deadline_ms / 1000,
        batch_size=settings.embed_batch_size,
        glossary=default_glossary() if settings.glossary else None,
        rules=Rules(steps=SHIPPED_STEPS if settings.multi_step else None),
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


def fusion_digest(selector: Selector) -> str:
    """The ranking version's second half (the first is the model's id): the digest of every
    constant the selector ranks with (``Rules.digest``: each arm's fusion and calibration,
    the BM25 field and context weights, the multi-step rule, the glossary on or off),
    computed once when the app is built. Two log lines with the same digest and model were
    ranked by the same rules."""
    return selector.rules.digest(glossary=selector.glossary is not None)
