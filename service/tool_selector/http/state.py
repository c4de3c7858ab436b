"""What a running app holds: settings, the selector, metrics, readiness. Kept on app state."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tool_selector.embeddings.encoder import Encoder
from tool_selector.errors import ConfigError, EmbeddingStopped
from tool_selector.http.workers import WorkerPool
from tool_selector.logs import Redactor
from tool_selector.metrics import Metrics
from tool_selector.pipeline.raw_tools import RequestDecoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings

EncoderFactory = Callable[[Settings], Encoder | None]


@dataclass(slots=True)
class Runtime:
    """Per-process resources of one app, created by the app factory, filled by the lifespan."""

    settings: Settings
    selector: Selector
    metrics: Metrics
    encoder_factory: EncoderFactory
    logger: logging.Logger
    decoder: RequestDecoder
    ready: threading.Event = field(default_factory=threading.Event)
    load_error: str | None = None
    workers: WorkerPool = field(default_factory=lambda: WorkerPool(2))
    redact: Redactor = field(default_factory=Redactor)

    def load_encoder(self) -> None:
        """Build the encoder (slow: loads the model) and attach it; then mark ready."""
        from tool_selector.http.wiring import limit_blas_threads, settle_heap, warm_up  # noqa: PLC0415

        self.load_static()
        try:
            self.selector.encoder = self.encoder_factory(self.settings)
        except Exception as exc:  # a model that fails to load must not crash-loop the server
            self.load_error = f"{type(exc).__name__}: {exc}"
            self.logger.exception("embedding model failed to load; serving lexical ranking")
            return
        limit_blas_threads(self.settings.blas_threads)  # again: the encoder may load a BLAS
        if self.settings.warmup_file:
            try:
                warm_up(self.selector, Path(self.settings.warmup_file))
            except EmbeddingStopped:
                self.logger.info("warm-up stopped: shutting down")
                return
            except Exception as exc:  # a bad warm-up file leaves the replica unready, not dead
                self.load_error = f"warm-up failed: {exc}"
                self.logger.exception("warm-up failed")
                return
        settle_heap()
        self.ready.set()

    def load_static(self) -> None:
        """Attach the static arm first (a table: well under a second), so cold catalogs get a
        dense signal even while the full model loads. Missing, it is logged, not fatal."""
        from tool_selector.embeddings.factory import static_from_settings  # noqa: PLC0415

        try:
            self.selector.static = static_from_settings(self.settings)
        except ConfigError as exc:
            self.logger.warning("static embeddings off: %s", exc)
