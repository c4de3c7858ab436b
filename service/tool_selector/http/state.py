"""What a running app holds: settings, the decoder and selector, metrics, readiness.

A record, kept on the Litestar app's state; ``http.startup`` fills in the encoder and
readiness.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from litestar import Request

from tool_selector.embeddings.encoder import Encoder
from tool_selector.http.workers import WorkerPool
from tool_selector.logs import Redactor
from tool_selector.metrics import Metrics
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings

EncoderFactory = Callable[[Settings], Encoder | None]


#: Catalog reports (``POST /v1/catalog/lint``) computed at once per process; one more
#: waits as a search waits for a slot, then is refused (503 ``overloaded``).
LINT_IN_FLIGHT = 1


@dataclass(slots=True)
class AppState:
    """Per-process resources of one app, created by the app factory."""

    settings: Settings
    decoder: Decoder
    selector: Selector
    metrics: Metrics
    encoder_factory: EncoderFactory
    logger: logging.Logger
    ready: threading.Event = field(default_factory=threading.Event)
    load_error: str | None = None
    workers: WorkerPool = field(default_factory=lambda: WorkerPool(2))
    #: The catalog report's own thread (``LINT_IN_FLIGHT``): a report never holds the
    #: searches' workers, nor one abandoned at its deadline.
    lint_workers: WorkerPool = field(default_factory=lambda: WorkerPool(LINT_IN_FLIGHT))
    redact: Redactor = field(default_factory=Redactor)
    #: The fitted constants' digest (``wiring.fusion_digest``), logged with every search.
    fusion_digest: str = ""
    #: Whether service tokens are configured (a search's default scope is its token's).
    tokens_on: bool = False


def state_of(request: Request[Any, Any, Any]) -> AppState:
    """The ``AppState`` the app factory put on the app serving ``request``."""
    state: AppState = request.app.state.runtime
    return state
