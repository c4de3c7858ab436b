"""Builds the selector and its caches from settings and wires them to the metrics.

Kept apart from ``app.py`` so the app factory stays wiring-only and short.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from tool_selector.embeddings.breaker import BreakerState, CircuitBreaker
from tool_selector.embeddings.cache import (
    CacheObserver,
    EmbeddingCache,
    MemoryCache,
    NullCache,
    TieredCache,
)
from tool_selector.errors import ConfigError
from tool_selector.learning.dir_store import DirStore
from tool_selector.learning.learner import Learner
from tool_selector.learning.store import Bounds, LearnStore, OnDrop
from tool_selector.lru import BoundedLRU
from tool_selector.metrics import Metrics
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.jobs import EmbeddingJobs, JobEvent
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.tool_vectors import Shortlist
from tool_selector.ranking.fitted import LEARN, SHIPPED_STEPS, Rules
from tool_selector.ranking.glossary import default_glossary
from tool_selector.ranking.language import glossary_forms
from tool_selector.ranking.learned import LearnRule, terms_key
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
        learning=learner_from_settings(settings, metrics),
        cache=cache,
        catalogs=CatalogStore(settings.catalog_cache_tools),
        queries=BoundedLRU(settings.query_cache_size),
        jobs=jobs,
        embed_deadline=settings.embed_deadline_ms / 1000,
        shortlist=Shortlist(
            settings.embed_deadline_ms / 1000, cache, rescue=settings.shortlist_rescue_ms / 1000
        ),
        batch_size=settings.embed_batch_size,
        glossary=default_glossary() if settings.glossary else None,
        rules=Rules(
            steps=SHIPPED_STEPS if settings.multi_step else None,
            learn=learn_rule(settings),
            shortlist=settings.shortlist_tools,
        ),
    )


def learn_rule(settings: Settings) -> LearnRule:
    """How learned evidence votes: the fitted rule with the operator's bounds."""
    keep = replace(
        LEARN.keep,
        ttl=settings.learn_ttl_days,
        per_caller=per_caller(settings),
    )
    return replace(LEARN, keep=keep)


def per_caller(settings: Settings) -> int:
    """How many of a scope's feedback records one caller's may be."""
    return max(1, int(settings.learn_caller_share * settings.learn_max_events))


def learner_from_settings(settings: Settings, metrics: Metrics) -> Learner | None:
    """The learner the settings ask for: its store in the learning Redis, else in the
    learning folder; ``None`` when learning is off or its folder cannot be written (logged;
    feedback then answers 503 ``learning_unavailable``)."""
    if not settings.learn or settings.encoder == "none":  # no vector to vote with
        return None
    bounds = Bounds(
        ttl=settings.learn_search_ttl_seconds,
        max_searches=settings.learn_max_searches,
        max_events=settings.learn_max_events,
        per_caller=per_caller(settings),
        max_total=settings.learn_max_total_events,
    )
    store: LearnStore
    if settings.learn_redis_url:
        store = _learn_redis(settings, bounds, metrics)
    else:
        try:
            store = DirStore(Path(settings.learn_dir), bounds, on_drop=_dropped(settings, metrics))
        except ConfigError as exc:
            logging.getLogger("tool_selector.learn").warning("learning unavailable: %s", exc)
            return None
    learner = Learner(
        store,
        learn_rule(settings),
        refresh=settings.learn_refresh_ms / 1000,
        max_total=settings.learn_max_total_events,
        terms_key=terms_key(settings.learn_terms_key),
    )
    metrics.learn_scopes.set_function(lambda: learner.sizes()[0])
    metrics.learn_events.set_function(lambda: learner.sizes()[1])
    metrics.learn_largest_scope.set_function(lambda: learner.sizes()[2])
    return learner


def _learn_redis(settings: Settings, bounds: Bounds, metrics: Metrics) -> LearnStore:
    """The learning Redis, behind a breaker that opens at the first failure to reach it (a
    hung one then costs one search its timeout) and says so in a gauge and the log."""
    from tool_selector.learning.redis_store import RedisStore  # noqa: PLC0415

    def on_change(state: BreakerState) -> None:
        metrics.learn_breaker_open.set(1 if state == "open" else 0)
        logging.getLogger("tool_selector.learn").warning(
            "learning redis circuit breaker %s", state, extra={"breaker": state}
        )

    breaker = CircuitBreaker(1, settings.redis_breaker_reset_ms / 1000, on_change)
    on_drop = _dropped(settings, metrics)
    return RedisStore(settings.learn_redis_url, bounds, breaker=breaker, on_drop=on_drop)


def _dropped(settings: Settings, metrics: Metrics) -> OnDrop:
    """What a scope dropped whole to keep the bound on all scopes' records does: counted
    and logged with its name."""

    def told(scope: str) -> None:
        metrics.learn_scopes_dropped.inc()
        logging.getLogger("tool_selector.learn").warning(
            "learning: scope %r dropped whole, the one fed least recently: all scopes held "
            "more than TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS=%d feedback records",
            scope,
            settings.learn_max_total_events,
            extra={"scope": scope},
        )

    return told


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
