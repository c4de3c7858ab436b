"""Feedback in: which tools of a search's answer the model called, and forgetting a scope.

- ``POST /v1/tool-discovery/feedback`` ``{"search_id", "called"}``: 200 ``Feedback`` once the
  learner's store keeps it (it survives a restart); 404 ``unknown_search`` for an id the
  service does not remember (unknown, older than the search TTL), or for a search answered
  by words alone while the model loaded (remembered without its pattern's vector, which
  the evidence needs: the detail says so, and it is counted ``model_loading``); 404 ``learning_off``
  with ``TOOL_SELECTOR_LEARN=false``; 503 ``learning_unavailable`` when the store cannot
  keep it. Auth, size caps, admission and errors as for a search (``http.guard``).
- ``DELETE /v1/tool-discovery/feedback?scope=NAME``: the scope's feedback forgotten.

A search's scope and caller (``scope_of``): ``X-Tool-Selector-Scope`` when sent (1 to 128
printable characters, no space), else the caller's token (``token:`` and 12 hex digits of
its sha256) where tokens are on, else ``default``. The caller is the token's digest, or the
client's address without tokens: one caller's share of a scope's evidence is capped.
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

import msgspec
from litestar import Request, Response, delete, post

from tool_selector.errors import (
    DECODE_ERRORS,
    BadRequest,
    LearningUnavailable,
    NotFound,
    bad_request,
)
from tool_selector.http.auth import tokens_from_headers
from tool_selector.http.edge import JSON, require_json
from tool_selector.http.state import AppState, state_of
from tool_selector.learning.learner import Learner, Verdict
from tool_selector.pipeline.decoding import check_name
from tool_selector.pipeline.surrogates import decode_text
from tool_selector_client.wire import FEEDBACK_PATH, SCOPE_HEADER, Feedback, FeedbackRequest

#: The scope a search lands in when it names none and no token names it.
DEFAULT_SCOPE = "default"
_SCOPE = re.compile(r"[\x21-\x7e]{1,128}")  # whole (fullmatch: "$" matched before a last "\n")
_DECODE = msgspec.json.Decoder(FeedbackRequest)
_ENCODE = msgspec.json.Encoder()


def scope_of(request: Request[Any, Any, Any], tokens_on: bool) -> tuple[str, str]:
    """The search's scope and caller (the module); ``BadRequest`` naming the header when the
    scope it sends is not one."""
    token = next(iter(tokens_from_headers(request.scope["headers"])), None)
    caller = (
        f"token:{hashlib.sha256(token).hexdigest()[:12]}"
        if token is not None and tokens_on
        else f"address:{request.client.host if request.client else 'unknown'}"
    )
    named = request.headers.get(SCOPE_HEADER)
    if named is not None:
        if not _SCOPE.fullmatch(named):
            raise BadRequest(
                "invalid_scope",
                f"{SCOPE_HEADER} must be 1 to 128 printable characters without spaces",
            )
        return named, caller
    return (caller if tokens_on else DEFAULT_SCOPE), caller


@post(FEEDBACK_PATH, status_code=200)
async def feedback(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Which tools of a search's answer the model called (``FeedbackRequest``)."""
    runtime = state_of(request)
    require_json(request)
    asked = _decoded(runtime, await request.body())
    learner = _learner(runtime)  # after the body: a bad one is a 400 whether learning is on
    try:
        verdict = await runtime.workers.run(
            lambda _: learner.feedback(asked.search_id, asked.called), time.perf_counter()
        )
    except LearningUnavailable:
        runtime.metrics.feedback.labels("unavailable").inc()
        raise
    _count(runtime, verdict)
    _refuse_unknown(runtime, asked.search_id, verdict)
    answer = Feedback(
        kept=verdict.status == "accepted" and bool(verdict.called or not verdict.unshown),
        called=list(verdict.called),
        unshown=list(verdict.unshown),
        duplicate=verdict.status == "duplicate",
    )
    return Response(_ENCODE.encode(answer), media_type=JSON)


def _refuse_unknown(runtime: AppState, search_id: str, verdict: Verdict) -> None:
    """404 ``unknown_search`` for a search not remembered, or one answered while the model
    was loading (remembered so that its feedback is told why it is not kept)."""
    if verdict.status == "unread":
        raise NotFound(
            "unknown_search",
            f"search {search_id} was answered while the model was loading (or had failed to "
            "load: /readyz says), by words alone: its pattern has no vector to learn with, so "
            "no feedback on it is kept",
        )
    if verdict.status == "unknown":
        ttl = runtime.settings.learn_search_ttl_seconds
        raise NotFound(
            "unknown_search",
            f"no search {search_id} is remembered (unknown, or answered more than {ttl} s ago)",
        )


def _decoded(runtime: AppState, body: bytes) -> FeedbackRequest:
    """The feedback asked, or a 400 naming the field: a ``called`` name no search would
    take (blank, a control character, too long) too, rather than counted as unshown."""
    try:
        asked = decode_text(_DECODE.decode, body, DECODE_ERRORS)
        for i, name in enumerate(asked.called):
            check_name(name, f"called[{i}]", runtime.settings)
    except DECODE_ERRORS as exc:
        runtime.metrics.feedback.labels("bad_request").inc()
        raise bad_request(exc) from exc
    except BadRequest:
        runtime.metrics.feedback.labels("bad_request").inc()
        raise
    return asked


@delete(FEEDBACK_PATH, status_code=200)
async def forget(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Forget a scope's feedback (``?scope=NAME``): its searches then answer as before any."""
    runtime = state_of(request)
    scope = request.query_params.get("scope", "")
    if not _SCOPE.fullmatch(scope):
        raise BadRequest(
            "invalid_scope", "query parameter `scope` must name a scope (1 to 128 characters)"
        )
    learner = _learner(runtime)
    await runtime.workers.run(lambda _: learner.forget(scope), time.perf_counter())
    return Response(_ENCODE.encode({"forgotten": scope}), media_type=JSON)


def _learner(runtime: AppState) -> Learner:
    learner, settings = runtime.selector.learning, runtime.settings
    if learner is not None:
        return learner
    if settings.learn and settings.encoder != "none":
        runtime.metrics.feedback.labels("unavailable").inc()
        raise LearningUnavailable(
            "learning_unavailable",
            f"the learning folder {settings.learn_dir!r} cannot be written; "
            "feedback is not kept (see the start-up log)",
        )
    runtime.metrics.feedback.labels("learning_off").inc()
    if settings.learn:
        raise NotFound(
            "learning_off",
            "learning needs an encoder: TOOL_SELECTOR_ENCODER=none ranks by words alone",
        )
    raise NotFound("learning_off", "learning is off (TOOL_SELECTOR_LEARN=false)")


def _count(runtime: AppState, verdict: Verdict) -> None:
    m = runtime.metrics
    result = {
        "unknown": "unknown_search",
        "unread": "model_loading",
        "duplicate": "duplicate",
    }.get(verdict.status)
    if result is None:
        result = "unshown_only" if verdict.unshown and not verdict.called else "accepted"
    m.feedback.labels(result).inc()
    if verdict.called:
        m.feedback_names.labels("called").inc(len(verdict.called))
    if verdict.unshown:
        m.feedback_names.labels("unshown").inc(len(verdict.unshown))
