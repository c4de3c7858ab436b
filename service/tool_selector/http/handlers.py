"""HTTP handlers: the body to the pipeline, its answer back. No ranking logic lives here.

Both wire contracts run the same code: ``pipeline.decoding`` tells the contract from the
path and the body and decodes it once into an ``Ask``, the selector ranks it, and the
contract encodes the names in its answer shape. Errors: ``http.edge``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from typing import Any

import msgspec
from litestar import Request, Response, get, post
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tool_selector import __version__
from tool_selector.errors import BadRequest
from tool_selector.http.edge import JSON, error_bytes, require_json
from tool_selector.http.feedback import scope_of
from tool_selector.http.search_id import search_id
from tool_selector.http.shadow import ShadowCompare
from tool_selector.http.state import AppState, state_of
from tool_selector.lint.report import render_text
from tool_selector.lint.request import lint_body
from tool_selector.logs import log_request
from tool_selector.pipeline.ask import Ask
from tool_selector.pipeline.contracts import Contract, Explained, Tally
from tool_selector.pipeline.selector import Outcome
from tool_selector_client.catalog_lint import LINT_PATH
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH, Explanation, Removed

RANKING_HEADER = "X-Tool-Selector-Ranking"
#: Whether the encoders that ranked the answer had the whole catalog's vectors:
#: ``complete``, ``partial`` or ``none`` (``pipeline.arms.Embedded``).
EMBEDDED_HEADER = "X-Tool-Selector-Embedded"
#: Text answers' media types without their charset: Litestar adds ``; charset=utf-8`` to
#: every ``text/`` type, and a second one makes a header that Go's ``mime.ParseMediaType``
#: (Prometheus' scraper among its readers) refuses.
TEXT = "text/plain"
_METRICS_TYPE = "; ".join(
    p for p in CONTENT_TYPE_LATEST.split("; ") if not p.lower().startswith("charset=")
)
_HEALTH = msgspec.json.encode({"status": "ok", "version": __version__})


@post(SEARCH_PATH, status_code=200)
async def search(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Rank the request's tools for its pattern (SPEC.md)."""
    return await _answer(request)


@post([COMPRESS_PATH, COMPRESS_PATH.rstrip("/")], status_code=200)
async def compress(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The proxy's later contract (``{query, max_tools, ...}``); the first one's body too."""
    return await _answer(request)


async def _answer(request: Request[Any, Any, Any]) -> Response[bytes]:
    runtime = state_of(request)
    started = time.perf_counter()
    runtime.metrics.in_flight.inc()
    try:  # an error's duration is the guard's (``Guard._failed``), cancellation included
        require_json(request)
        body = await request.body()
        who = _who(runtime, request)
        contract, ask, outcome = await runtime.workers.run(
            partial(_decode_and_select, runtime, body, request.scope["path"], who), started
        )
    finally:
        runtime.metrics.in_flight.dec()
    elapsed = time.perf_counter() - started
    _record(runtime, ask, outcome, contract, elapsed=elapsed, sid=search_id(request.scope))
    ranking = outcome.ranking
    shadow: ShadowCompare | None = request.app.state.get("shadow")
    tally = Tally(outcome.tools, round(elapsed * 1000))
    return Response(
        contract.answer(ranking.names, _explained(outcome) if ask.explain else None, tally),
        media_type=JSON,
        headers={RANKING_HEADER: outcome.path, EMBEDDED_HEADER: outcome.provenance.embedded},
        background=shadow.task(ask, outcome.catalog, ranking.names)
        if shadow and outcome.catalog is not None
        else None,
    )


def _who(runtime: AppState, request: Request[Any, Any, Any]) -> tuple[str, str, str] | None:
    """The search's id, scope and caller when it is remembered for feedback (learning on);
    a scope header that is not one is a 400 either way."""
    scope, caller = scope_of(request, tokens_on=runtime.tokens_on)
    if runtime.selector.learning is None:
        return None
    return search_id(request.scope), scope, caller


def _decode_and_select(
    runtime: AppState,
    body: bytes,
    path: str,
    who: tuple[str, str, str] | None,
    started: float,
) -> tuple[Contract, Ask, Outcome]:
    """Decode once and rank, in a worker thread (even the body scan stays off the loop);
    with learning on, in the search's scope, then remembered for its feedback (``who``).
    The wait from the handler's ``started`` to a worker is the ``queue`` stage, apart from
    ``decode``: behind a long search, a short one's decode is not that search's time."""
    working = time.perf_counter()
    runtime.metrics.stage_seconds.labels("queue").observe(working - started)
    contract, ask = runtime.decoder.decode(body, path)
    runtime.metrics.stage_seconds.labels("decode").observe(time.perf_counter() - working)
    if who is None:
        return contract, ask, runtime.selector.select(ask)
    sid, scope, caller = who
    ask = replace(ask, scope=scope)
    outcome = runtime.selector.select(ask)
    runtime.selector.remember(sid, ask, outcome, caller)
    return contract, ask, outcome


@post(LINT_PATH, status_code=200)
async def lint_catalog(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The catalog report (docs/catalog-lint.md) of a held catalog or of the sent tools, as
    JSON, or as text with ``?format=text``."""
    runtime = state_of(request)
    started = time.perf_counter()
    require_json(request)
    fmt = request.query_params.get("format", "json")
    if fmt not in {"json", "text"}:
        raise BadRequest("invalid_format", f"format must be json or text, got {fmt!r}")
    body = await request.body()
    named = scope_of(request, tokens_on=runtime.tokens_on)[0]  # a bad header: 400 either way
    scope = named if runtime.selector.learning else None
    report = await runtime.lint_workers.run(
        lambda _: lint_body(body, runtime.decoder, runtime.selector, scope), started
    )
    if fmt == "text":
        return Response(render_text(report).encode(), media_type=TEXT)
    return Response(msgspec.json.encode(report), media_type=JSON)


@get("/healthz")
async def healthz() -> Response[bytes]:
    """Alive: the process answers HTTP."""
    return Response(b'{"status":"ok"}', media_type=JSON)


@get("/health")
async def health() -> Response[bytes]:
    """Alive, answered as Compresr's server answers ``GET /health``: status and version."""
    return Response(_HEALTH, media_type=JSON)


@get("/readyz")
async def readyz(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Ready: the embedding model is loaded and hybrid answers are possible."""
    runtime = state_of(request)
    if runtime.ready.is_set():
        return Response(b'{"status":"ready"}', media_type=JSON)
    detail = runtime.load_error or "embedding model is loading"
    return Response(
        error_bytes(request.scope["path"], "not_ready", detail), status_code=503, media_type=JSON
    )


@get("/metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Prometheus exposition of this process's metrics."""
    return Response(generate_latest(state_of(request).metrics.registry), media_type=_METRICS_TYPE)


def _explained(outcome: Outcome) -> Explained:
    ranking = outcome.ranking
    return Explained(
        explanations=[
            msgspec.convert(p, Explanation, from_attributes=True) for p in ranking.picked
        ],
        removed=Removed(**outcome.removed) if outcome.removed else None,
        unmatched_terms=list(ranking.unmatched) if not ranking.picked else None,
    )


def _record(
    runtime: AppState, ask: Ask, outcome: Outcome, contract: Contract, *, elapsed: float, sid: str
) -> None:
    _count(runtime, ask, outcome, elapsed, contract)
    pattern = runtime.redact(ask.pattern) if runtime.settings.log_redact else ask.pattern
    log_request(
        runtime.logger,
        {
            "event": "search",
            "search_id": sid,
            "ranking": _ranking(runtime, outcome),
            "contract": contract.name,
            "pattern": pattern,
            "pattern_chars": ask.pattern_chars,
            "pattern_kind": ask.pattern_kind,
            "tools": outcome.tools,
            "catalog": outcome.catalog_key,
            "duplicates": outcome.duplicates,
            "top_k": ask.top_k,
            "selected": outcome.ranking.names,
            "no_match": outcome.ranking.no_match,
            "path": outcome.path,
            "deferred": outcome.deferred,
            "rescue": outcome.rescue,
            "ms": round(elapsed * 1000, 2),
            "stages_ms": {k: round(v * 1000, 2) for k, v in outcome.timings.items()},
        },
    )


def _ranking(runtime: AppState, outcome: Outcome) -> dict[str, str | None]:
    """The ranking version (``Outcome.provenance``): the arm that answered, the ids of the
    encoders whose cosines ranked and the digests of their weights (``None`` both on the
    lexical path, which reads no model), whether they had the whole catalog's vectors, and
    the digest of every constant the selector ranks with."""
    made = outcome.provenance
    return {
        "arm": made.arm,
        "model": made.model,
        "weights": made.weights,
        "embedded": made.embedded,
        "fusion": runtime.fusion_digest,
    }


def _count(
    runtime: AppState, ask: Ask, outcome: Outcome, elapsed: float, contract: Contract
) -> None:
    m = runtime.metrics
    outcome_label = "no_match" if outcome.ranking.no_match else "match"
    m.request_seconds.labels(outcome_label, contract.name).observe(elapsed)
    for stage, seconds in outcome.timings.items():
        m.stage_seconds.labels(stage).observe(seconds)
    m.tools_per_request.observe(outcome.tools)
    m.selected.observe(len(outcome.ranking.picked))
    m.ranking_path.labels(outcome.path).inc()
    m.embedded_answers.labels(outcome.provenance.embedded).inc()
    if outcome.rescue is not None:
        m.rescues.labels(outcome.rescue).inc()
    if outcome.ranking.learned_moved:
        m.learned_answers.inc()
    if outcome.ranking.no_match:
        m.no_match.inc()
    if not outcome.ranking.picked:
        m.empty_answers.labels(contract.name).inc()
    if ask.pattern_kind is not None:
        m.patterns_cut.labels(ask.pattern_kind).inc()
    if outcome.duplicates:
        m.duplicates.inc(outcome.duplicates)
    if outcome.unknown_always_keep:
        m.unknown_always_keep.inc(outcome.unknown_always_keep)
    _count_controls(runtime, ask, outcome)
    m.catalog_cache.labels("hit" if outcome.catalog_reused else "miss").inc()
    if outcome.path == "hybrid":
        m.query_cache.labels("hit" if outcome.query_cached else "miss").inc()


def _count_controls(runtime: AppState, ask: Ask, outcome: Outcome) -> None:
    """What the caller's controls did: tools each removed, answers cut, context carried."""
    m = runtime.metrics
    for control, removed in outcome.removed.items():
        if removed:
            m.controls_removed.labels(control).inc(removed)
    if outcome.removed.get("budget"):
        m.budget_cut.inc()
    if ask.context is not None and (ask.context.messages or ask.context.recent_tools):
        m.context_requests.inc()
