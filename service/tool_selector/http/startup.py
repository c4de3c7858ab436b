"""Process start: the static table, then the model, the warm-up file, the BLAS cap and a
frozen heap, on a thread of its own while the app already answers (lexically); the
multilingual arm right after the model."""

from __future__ import annotations

import gc
from pathlib import Path

from threadpoolctl import threadpool_limits

from tool_selector.embeddings.factory import multilingual_from_settings, static_from_settings
from tool_selector.errors import ConfigError, EmbeddingStopped
from tool_selector.http.state import AppState
from tool_selector.pipeline import calibration
from tool_selector.pipeline.warmup import warm_up


def load_encoder(state: AppState) -> None:
    """Build the encoder (slow: loads the model) and attach it; then mark ready."""
    load_static(state)
    try:
        state.selector.encoder = state.encoder_factory(state.settings)
    except Exception as exc:  # a model that fails to load must not crash-loop the server
        state.load_error = f"{type(exc).__name__}: {exc}"
        state.logger.exception("embedding model failed to load; serving lexical ranking")
        return
    load_multilingual(state)
    limit_blas_threads(state.settings.blas_threads)  # again: the encoder may load a BLAS
    calibrate(state)
    if state.settings.warmup_file:
        try:
            warm_up(state.selector, Path(state.settings.warmup_file))
        except EmbeddingStopped:
            state.logger.info("warm-up stopped: shutting down")
            return
        except Exception as exc:  # a bad warm-up file leaves the replica unready, not dead
            state.load_error = f"warm-up failed: {exc}"
            state.logger.exception("warm-up failed")
            return
    settle_heap()
    state.ready.set()


def calibrate(state: AppState) -> None:
    """Measure each model's encode rate now (``pipeline.calibration``), so a fresh replica
    predicts what a request may encode by this machine's speed, not the slowest seen."""
    selector = state.selector
    encoders = selector.encoders
    if encoders is None or not state.settings.calibrate_encode:
        return
    try:
        selector.vectors.calibrate(encoders, calibration.TOOLS)
    except Exception:  # a measure, not a need: the default rate stands
        state.logger.exception("encode rates not measured; predicting with the default")
        return
    rates = ", ".join(
        f"{p.model_id} {1e6 * selector.jobs.rate(p.model_id):.1f}" for p in encoders.parts
    )
    state.logger.info("encode rates measured at start, microseconds a character: %s", rates)


def load_multilingual(state: AppState) -> None:
    """Attach the multilingual arm (a few seconds of CPU, before the replica is ready, so the
    load never competes with served requests; until then a request in another language is
    ranked as an English one). Failing, it is logged, not fatal."""
    try:
        state.selector.multilingual = multilingual_from_settings(state.settings)
    except Exception:  # an optional arm that fails to load must not take the replica down
        state.logger.exception("multilingual arm failed to load; ranking every request as English")


def load_static(state: AppState) -> None:
    """Attach the static arm first (a table: well under a second), so cold catalogs get a
    dense signal even while the full model loads. Missing, it is logged, not fatal."""
    try:
        state.selector.static = static_from_settings(state.settings)
    except ConfigError as exc:
        state.logger.warning("static embeddings off: %s", exc)


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
