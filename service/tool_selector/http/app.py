"""The app factory: wiring only. ``granian --factory tool_selector.http.app:app_from_env``."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from litestar import Litestar
from prometheus_client import CollectorRegistry

from tool_selector import __version__
from tool_selector.embeddings.encoder import BUNDLED_MODEL_ID
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.embeddings.onnx import ONNX_MODEL_ID
from tool_selector.http.auth import KeyRing
from tool_selector.http.edge import error_response
from tool_selector.http.feedback import feedback, forget
from tool_selector.http.guard import guard_middleware
from tool_selector.http.handlers import (
    compress,
    health,
    healthz,
    lint_catalog,
    metrics,
    readyz,
    search,
)
from tool_selector.http.search_id import stamp
from tool_selector.http.shadow import ShadowCompare
from tool_selector.http.startup import limit_blas_threads, load_encoder
from tool_selector.http.state import AppState, EncoderFactory
from tool_selector.http.wiring import build_selector, fusion_digest
from tool_selector.http.workers import WorkerPool
from tool_selector.logs import Redactor
from tool_selector.metrics import Metrics, ShadowMetrics
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings

#: Longest shutdown waits for embedding work to reach a chunk boundary (per thread).
_STOP_SECONDS = 10.0


def create_app(
    settings: Settings,
    encoder_factory: EncoderFactory = encoder_from_settings,
    registry: CollectorRegistry | None = None,
) -> Litestar:
    """Build the ASGI app. Nothing heavy happens here; the model loads in the lifespan."""
    state = build_state(settings, encoder_factory, registry or CollectorRegistry())
    keys = KeyRing.from_settings(settings)
    state.tokens_on = keys.enabled
    app = Litestar(
        route_handlers=[
            search,
            compress,
            feedback,
            forget,
            lint_catalog,
            health,
            healthz,
            readyz,
            metrics,
        ],
        exception_handlers={Exception: error_response},
        before_send=[stamp],
        middleware=[guard_middleware(state, keys)],
        request_max_body_size=settings.max_body_bytes,
        lifespan=[partial(_lifespan, state)],
        openapi_config=None,
        logging_config=None,
    )
    app.state.runtime = state
    if settings.shadow == "relevance":
        app.state.shadow = ShadowCompare(ShadowMetrics(state.metrics.registry))
    return app


def build_state(
    settings: Settings, encoder_factory: EncoderFactory, registry: CollectorRegistry
) -> AppState:
    """The app's resources: metrics, the selector (naive for the benchmark's baseline), the
    decoder; the model is loaded later, by the lifespan."""
    logger = logging.getLogger("tool_selector.access")
    logger.setLevel(settings.log_level.upper())
    metrics_ = Metrics(registry)
    naive = settings.pipeline == "naive"
    kind = _naive_selector() if naive else Selector
    selector = build_selector(settings, metrics_, kind)
    state = AppState(
        settings=settings,
        decoder=Decoder(settings, name_by_bytes=not naive and settings.reuse_raw_tools),
        selector=selector,
        metrics=metrics_,
        encoder_factory=encoder_factory,
        logger=logger,
        workers=WorkerPool(settings.worker_threads),
        redact=Redactor(settings.log_redact_key),
        fusion_digest=fusion_digest(selector),
    )
    model = settings.model_path or BUNDLED_MODEL_ID
    state.metrics.build.info(
        {
            "version": __version__,
            "encoder": settings.encoder,
            "model": ONNX_MODEL_ID if settings.encoder == "onnx-int8" else model,
        }
    )
    return state


def _naive_selector() -> type[Selector]:
    from tool_selector.offline.naive import NaiveSelector  # noqa: PLC0415

    return NaiveSelector


@asynccontextmanager
async def _lifespan(state: AppState, app: Litestar) -> AsyncIterator[None]:
    limit_blas_threads(state.settings.blas_threads)  # before the first request is served
    loader = threading.Thread(target=load_encoder, args=(state,), name="load-encoder", daemon=True)
    loader.start()
    try:
        yield
    finally:
        # embedding stops at its next chunk (background jobs and warm-up alike), before
        # the caches it writes to close; a thread left inside ONNX Runtime at exit aborts
        state.selector.jobs.close(timeout=_STOP_SECONDS)
        loader.join(_STOP_SECONDS)
        state.selector.cache.close()
        if state.selector.learning is not None:
            state.selector.learning.store.close()
        shadow: ShadowCompare | None = app.state.get("shadow")
        if shadow is not None:
            shadow.close()


def app_from_env() -> Litestar:
    """Zero-argument factory for granian: settings from the process environment."""
    _configure_logging()
    return create_app(Settings.from_env(os.environ))


def _configure_logging() -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("bm25s", "sentence_transformers", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
