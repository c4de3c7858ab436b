"""HTTP handlers: decode, call the core, encode. No ranking logic lives here.

Both wire contracts (``tool_selector.pipeline.contracts``) run the same code: the contract is chosen
from the path and the body, adapted to a ``SearchRequest``, ranked, and the names encoded in
the contract's answer shape.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from litestar import Request, Response, get, post
from litestar.exceptions import HTTPException
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tool_selector.errors import RequestError, UnsupportedMediaType
from tool_selector.http.shadow import ShadowCompare
from tool_selector.http.state import Runtime
from tool_selector.logs import log_request
from tool_selector.pipeline.contracts import Contract, contract_for, error_bytes
from tool_selector.pipeline.raw_tools import Decoded
from tool_selector.pipeline.selector import Outcome
from tool_selector.ranking.ranker import Ranking
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH, Explanation

RANKING_HEADER = "X-Tool-Selector-Ranking"
_JSON = "application/json"
_HTTP_CODES = {
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    503: "unavailable",
}


def runtime_of(request: Request[Any, Any, Any]) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


@post(SEARCH_PATH, status_code=200)
async def search(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Rank the request's tools for its pattern (SPEC.md)."""
    return await _answer(request)


@post([COMPRESS_PATH, COMPRESS_PATH.rstrip("/")], status_code=200)
async def compress(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The proxy's later contract (``{query, max_tools, ...}``); the first one's body too."""
    return await _answer(request)


async def _answer(request: Request[Any, Any, Any]) -> Response[bytes]:
    runtime = runtime_of(request)
    started = time.perf_counter()
    runtime.metrics.in_flight.inc()
    try:
        _require_json(request)
        body = await request.body()
        contract, decoded, outcome = await runtime.workers.run(
            partial(_decode_and_select, runtime, body, request.scope["path"]), started
        )
    except Exception:
        runtime.metrics.request_seconds.labels("error").observe(time.perf_counter() - started)
        raise
    finally:
        runtime.metrics.in_flight.dec()
    elapsed = time.perf_counter() - started
    _record(runtime, decoded, outcome, elapsed, contract)
    ranking = outcome.ranking
    explanations = _explanations(ranking) if decoded.request.explain else None
    shadow: ShadowCompare | None = request.app.state.get("shadow")
    return Response(
        contract.answer(ranking.names, explanations),
        media_type=_JSON,
        headers={RANKING_HEADER: outcome.path},
        background=shadow.task(decoded.request, outcome.catalog, ranking.names)
        if shadow and outcome.catalog is not None
        else None,
    )


def _decode_and_select(
    runtime: Runtime, body: bytes, path: str, started: float
) -> tuple[Contract, Decoded, Outcome]:
    """Tell the contract, decode (a resent tool list is not decoded again) and rank, in a
    worker thread: even the contract's scan of the body stays off the event loop."""
    contract = contract_for(path, body)
    decoded = runtime.decoder.decode(body, contract)
    runtime.metrics.stage_seconds.labels("decode").observe(time.perf_counter() - started)
    outcome = runtime.selector.select(
        decoded.request, catalog_key=decoded.catalog_key, entry=decoded.entry
    )
    return contract, decoded, outcome


@get("/healthz")
async def healthz() -> Response[bytes]:
    """Alive: the process answers HTTP."""
    return Response(b'{"status":"ok"}', media_type=_JSON)


@get("/readyz")
async def readyz(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Ready: the embedding model is loaded and hybrid answers are possible."""
    runtime = runtime_of(request)
    if runtime.ready.is_set():
        return Response(b'{"status":"ready"}', media_type=_JSON)
    detail = runtime.load_error or "embedding model is loading"
    return Response(
        error_bytes(request.scope["path"], "not_ready", detail), status_code=503, media_type=_JSON
    )


@get("/metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Prometheus exposition of this process's metrics."""
    return Response(
        generate_latest(runtime_of(request).metrics.registry), media_type=CONTENT_TYPE_LATEST
    )


def _require_json(request: Request[Any, Any, Any]) -> None:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != _JSON:
        raise UnsupportedMediaType(
            "unsupported_media_type", f"Content-Type must be {_JSON}, got {media or 'nothing'}"
        )


def _explanations(ranking: Ranking) -> list[Explanation]:
    return [
        Explanation(
            name=p.name,
            reason=p.reason,
            score=p.score,
            bm25_score=p.bm25_score,
            bm25_rank=p.bm25_rank,
            dense_similarity=p.dense_similarity,
            dense_rank=p.dense_rank,
            matched_terms=list(p.matched_terms),
        )
        for p in ranking.picked
    ]


def _record(
    runtime: Runtime, decoded: Decoded, outcome: Outcome, elapsed: float, contract: Contract
) -> None:
    request = decoded.request
    m = runtime.metrics
    outcome_label = "no_match" if outcome.ranking.no_match else "match"
    m.request_seconds.labels(outcome_label).observe(elapsed)
    for stage, seconds in outcome.timings.items():
        m.stage_seconds.labels(stage).observe(seconds)
    m.tools_per_request.observe(outcome.tools)
    m.selected.observe(len(outcome.ranking.picked))
    m.ranking_path.labels(outcome.path).inc()
    if outcome.ranking.no_match:
        m.no_match.inc()
    if not outcome.ranking.picked:
        m.empty_answers.labels(contract.name).inc()
    if decoded.pattern_cut:
        m.patterns_cut.inc()
    if outcome.duplicates:
        m.duplicates.inc(outcome.duplicates)
    if outcome.unknown_always_keep:
        m.unknown_always_keep.inc(outcome.unknown_always_keep)
    m.catalog_cache.labels("hit" if outcome.catalog_reused else "miss").inc()
    if outcome.path == "hybrid":
        m.query_cache.labels("hit" if outcome.query_cached else "miss").inc()
    pattern = runtime.redact(request.pattern) if runtime.settings.log_redact else request.pattern
    log_request(
        runtime.logger,
        {
            "event": "search",
            "contract": contract.name,
            "pattern": pattern,
            "pattern_chars": decoded.pattern_chars,
            "tools": outcome.tools,
            "duplicates": outcome.duplicates,
            "top_k": request.top_k,
            "selected": outcome.ranking.names,
            "no_match": outcome.ranking.no_match,
            "path": outcome.path,
            "deferred": outcome.deferred,
            "ms": round(elapsed * 1000, 2),
            "stages_ms": {k: round(v * 1000, 2) for k, v in outcome.timings.items()},
        },
    )


def error_response(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """Translate any exception into the one JSON error shape (registered for all of them)."""
    if isinstance(exc, RequestError):
        status, code, detail = exc.status, exc.code, exc.detail
    elif isinstance(exc, HTTPException):
        status = exc.status_code
        code = _HTTP_CODES.get(status, "http_error")
        detail = exc.detail
    else:
        status, code, detail = 500, "internal_error", "internal error; see the service log"
        runtime_of(request).logger.error("unhandled error", exc_info=exc)
    runtime_of(request).metrics.errors.labels(code).inc()
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        error_bytes(request.scope["path"], code, detail),
        status_code=status,
        media_type=_JSON,
        headers=headers,
    )
