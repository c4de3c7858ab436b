"""The app factory: wiring only. ``granian --factory tool_selector.app:app_from_env``."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from anyio import CapacityLimiter
from litestar import Litestar
from prometheus_client import CollectorRegistry

from tool_selector import __version__
from tool_selector.api import error_response, healthz, metrics, readyz, search
from tool_selector.assembly import build_selector
from tool_selector.embeddings.encoder import BUNDLED_MODEL_ID, Encoder, SentenceTransformerEncoder
from tool_selector.embeddings.onnx import ONNX_MODEL_ID
from tool_selector.fastpath import RequestDecoder
from tool_selector.metrics import Metrics
from tool_selector.runtime import EncoderFactory, Runtime
from tool_selector.settings import Settings


def default_encoder(settings: Settings) -> Encoder | None:
    """The encoder the settings ask for (``None``: lexical ranking only)."""
    if settings.encoder == "none":
        return None
    if settings.encoder == "onnx-int8":
        from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

        return OnnxEncoder()
    from pathlib import Path  # noqa: PLC0415

    path = Path(settings.model_path) if settings.model_path else None
    model_id = settings.model_path or BUNDLED_MODEL_ID
    return SentenceTransformerEncoder(model_path=path, model_id=model_id)


def create_app(
    settings: Settings,
    encoder_factory: EncoderFactory = default_encoder,
    registry: CollectorRegistry | None = None,
) -> Litestar:
    """Build the ASGI app. Nothing heavy happens here; the model loads in the lifespan."""
    logger = logging.getLogger("tool_selector.access")
    logger.setLevel(settings.log_level.upper())
    metrics_ = Metrics(registry or CollectorRegistry())
    runtime = Runtime(
        settings=settings,
        selector=build_selector(settings, metrics_),
        metrics=metrics_,
        encoder_factory=encoder_factory,
        logger=logger,
        decoder=RequestDecoder(
            settings, settings.decode_memo_tools if settings.pipeline == "fast" else 0
        ),
    )
    runtime.metrics.build.info(
        {
            "version": __version__,
            "encoder": settings.encoder,
            "model": ONNX_MODEL_ID
            if settings.encoder == "onnx-int8"
            else settings.model_path or BUNDLED_MODEL_ID,
        }
    )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        runtime.limiter = CapacityLimiter(settings.worker_threads)
        threading.Thread(target=runtime.load_encoder, name="load-encoder", daemon=True).start()
        try:
            yield
        finally:
            runtime.selector.cache.close()

    app = Litestar(
        route_handlers=[search, healthz, readyz, metrics],
        exception_handlers={Exception: error_response},
        request_max_body_size=settings.max_body_bytes,
        lifespan=[lifespan],
        openapi_config=None,
        logging_config=None,
    )
    app.state.runtime = runtime
    return app


def app_from_env() -> Litestar:
    """Zero-argument factory for granian: settings from the process environment."""
    _configure_logging()
    return create_app(Settings.from_env(os.environ))


def _configure_logging() -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("bm25s", "sentence_transformers", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
