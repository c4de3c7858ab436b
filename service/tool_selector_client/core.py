"""The sans-I/O half of the client, shared by the sync and async clients.

``prepare`` turns the caller's raw tools into a request body; ``interpret`` turns the
service's answer into a ``Selection`` using the proxy's validation rules: names that were
not sent are ignored, each name counts once, at most ``top_k`` are kept in our rank order,
and an empty or all-unknown answer is not meaningful (fail open).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

import msgspec

from tool_selector_client.definitions import expand, pick_definitions, to_wire
from tool_selector_client.policy import facts, failed_filter
from tool_selector_client.wire import (
    Budget,
    Context,
    Feedback,
    Filters,
    SearchRequest,
    SearchResponse,
    Tool,
)

__all__ = [
    "FAIL_REASONS",
    "Controls",
    "FailReason",
    "FeedbackReason",
    "Prepared",
    "Reported",
    "Selection",
    "clamp_top_k",
    "fail_open",
    "feedback_body",
    "interpret",
    "listed",
    "permitted",
    "prepare",
    "reported",
    "unhealthy",
]

FailReason = Literal[
    "timeout",
    "connect_error",
    "http_status",
    "bad_response",
    "empty_selection",
    "unknown_names",
    "empty_pattern",
    "circuit_open",
    "disabled",
]
#: Every reason a selection can fail open with (the closed set).
FAIL_REASONS: tuple[str, ...] = get_args(FailReason)
#: Failures that say the service is unhealthy (they feed the circuit breaker).
UNHEALTHY: frozenset[str] = frozenset({"timeout", "connect_error", "http_status", "bad_response"})
#: 4xx answers that still say the service is struggling.
_OVERLOADED = frozenset({408, 429})
MAX_RESPONSE_BYTES = 1 << 20

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(SearchResponse)
_FEEDBACK = msgspec.json.Decoder(Feedback)


@dataclass(frozen=True, slots=True)
class Selection:
    """The client's answer: never an exception.

    ``tools`` is what to give the model: the raw definitions of our picks when the answer
    was meaningful, otherwise every deferred tool (fail open) and ``reason`` says why.
    ``search_id``: the answer's ``X-Tool-Selector-Search-Id`` (empty when no answer came),
    the id its feedback names (``SelectorClient.feedback``).
    """

    tools: list[Any]
    names: tuple[str, ...] = ()
    reason: FailReason | None = None
    latency_s: float = 0.0
    status: int | None = None
    detail: str = ""
    search_id: str = ""

    @property
    def ok(self) -> bool:
        """True when our picks are usable."""
        return self.reason is None

    @property
    def outcome(self) -> str:
        """``ok`` or the fail-open reason (a metric label)."""
        return self.reason or "ok"


@dataclass(frozen=True, slots=True)
class Controls:
    """The caller's optional controls, sent as the request's fields of the same names.

    ``filters`` also hold when the client fails open: only the tools they permit come back
    (``permitted``). With ``min_score`` an empty answer is an answer (the caller asked for
    fewer, surer tools), not a reason to fail open. The budget is the service's to apply;
    a fail-open answer is every permitted tool, as the caller's own fallback would be.
    """

    filters: Filters | None = None
    budget: Budget | None = None
    min_score: float | None = None
    context: Context | None = None


NO_CONTROLS = Controls()


@dataclass(frozen=True, slots=True)
class Prepared:
    """A request ready to send, and what is needed to read its answer."""

    tools: list[Any]
    body: bytes
    sent: frozenset[str]
    top_k: int
    always_keep: tuple[str, ...] = field(default=())
    empty_ok: bool = False
    budgeted: bool = False


def permitted(tools: list[Any], filters: Filters | None) -> list[Any]:
    """The raw ``tools`` that ``filters`` permit (all of them when there are none). A Gemini
    wrapper (``functionDeclarations``) is kept whole when each of its declarations is
    permitted, else as the declarations that are. A tool that cannot be checked (no usable
    name, a definition the check cannot read) is left out when there are filters."""
    if filters is None:
        return tools
    out = []
    for raw in tools:
        inside = list(expand([raw]))
        passing = [d for d in inside if _passes(filters, d)]
        if len(passing) == len(inside) and passing:
            out.append(raw)
        else:
            out.extend(passing)
    return out


def _passes(filters: Filters, definition: Any) -> bool:
    """Whether ``filters`` permit one definition; ``False`` when it cannot be checked."""
    try:
        wire = to_wire(definition)
        return (
            wire is not None and failed_filter(filters, wire.name, facts(wire, sized=False)) is None
        )
    except Exception:  # the caller's odd definition: not permitted, never a raise
        return False


def clamp_top_k(top_k: int | None, max_results: int) -> int:
    """The ``top_k`` to send: the caller's, capped at ``max_results``, at least 1."""
    return max(1, max_results if top_k is None else min(top_k, max_results))


def listed(tools: Any) -> list[Any]:
    """``tools`` as a list, read once (a generator works); ``[]`` when it is not iterable."""
    try:
        return list(tools)
    except Exception:  # a caller's bad argument must not raise either
        return []


def unhealthy(selection: Selection) -> bool:
    """Whether ``selection`` says the service is unhealthy (it feeds the circuit breaker).

    A 4xx other than 408 or 429 is the service refusing this one request (too many tools, a
    bad token): the service is up, so it does not count.
    """
    status = selection.status
    if selection.reason == "http_status" and status is not None and status < 500:
        return status in _OVERLOADED
    return selection.reason in UNHEALTHY


def fail_open(
    tools: Sequence[Any],
    reason: FailReason,
    *,
    latency_s: float = 0.0,
    status: int | None = None,
    detail: str = "",
) -> Selection:
    """Every deferred tool back, with the reason."""
    return Selection(
        tools=list(tools), reason=reason, latency_s=latency_s, status=status, detail=detail
    )


def prepare(
    pattern: str,
    tools: Sequence[Any],
    top_k: int,
    always_keep: Iterable[str],
    controls: Controls = NO_CONTROLS,
) -> Prepared | Selection:
    """Build the request body, or a fail-open ``Selection`` when there is nothing to ask."""
    if not isinstance(pattern, str) or not pattern.strip():
        return fail_open(tools, "empty_pattern", detail="pattern is empty")
    wire: list[Tool] = [t for t in (to_wire(d) for d in expand(tools)) if t is not None]
    if not wire:
        return fail_open(tools, "empty_selection", detail="no tool with a usable name")
    keep = tuple(n for n in always_keep if isinstance(n, str) and n)
    request = SearchRequest(
        pattern=pattern,
        tools=wire,
        top_k=max(1, top_k),
        always_keep=list(keep),
        filters=controls.filters,
        budget=controls.budget,
        min_score=controls.min_score,
        context=controls.context,
    )
    return Prepared(
        tools=list(tools),
        body=_ENCODER.encode(request),
        sent=frozenset(t.name for t in wire),
        top_k=max(1, top_k),
        always_keep=keep,
        empty_ok=controls.min_score is not None,
        budgeted=controls.budget is not None,
    )


def interpret(
    prepared: Prepared, status: int, body: bytes, latency_s: float, search_id: str = ""
) -> Selection:
    """Apply the proxy's validation rules to the service's answer (its id: ``search_id``)."""
    return replace(_interpreted(prepared, status, body, latency_s), search_id=search_id)


def _interpreted(prepared: Prepared, status: int, body: bytes, latency_s: float) -> Selection:
    tools = prepared.tools
    if not 200 <= status < 300:
        return fail_open(tools, "http_status", latency_s=latency_s, status=status)
    try:
        answer = _DECODER.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        return fail_open(
            tools, "bad_response", latency_s=latency_s, status=status, detail=str(exc)[:200]
        )
    if not answer.selected_names:
        if prepared.empty_ok:
            return Selection(tools=[], latency_s=latency_s, status=status)
        return fail_open(tools, "empty_selection", latency_s=latency_s, status=status)
    names = [n for n in dict.fromkeys(answer.selected_names) if n in prepared.sent]
    names = names[: prepared.top_k]
    unusable = _unusable(prepared, names)
    if unusable is not None:
        reason, detail = unusable
        return fail_open(tools, reason, latency_s=latency_s, status=status, detail=detail)
    return Selection(
        tools=pick_definitions(tools, names),
        names=tuple(names),
        latency_s=latency_s,
        status=status,
    )


def _unusable(prepared: Prepared, names: list[str]) -> tuple[FailReason, str] | None:
    """Why the answer's known ``names`` are no answer: none of them (``unknown_names``), or
    only ``always_keep`` names where it had room for more, no useful match (SPEC rule 4) as
    an empty answer is (not when ``min_score`` or a budget may have cut it, nor when
    ``always_keep`` fills ``top_k`` or the tools sent by itself); ``None`` when they are
    one."""
    if not names:
        return "unknown_names", ""
    if (
        prepared.empty_ok
        or prepared.budgeted
        or len(names) >= min(prepared.top_k, len(prepared.sent))
    ):
        return None
    if set(names) <= set(prepared.always_keep):
        return "empty_selection", "only always_keep names: no useful match"
    return None


FeedbackReason = Literal["timeout", "connect_error", "http_status", "bad_response", "no_search"]


@dataclass(frozen=True, slots=True)
class Reported:
    """What became of a feedback: ``kept`` (the service keeps it), else ``reason`` says why
    not (``http_status`` with ``status``: 404 for a search it does not remember, or learning
    off; ``no_search``: the selection had no search id). ``unshown``: names the search had
    not shown (they moved nothing). Never an exception."""

    kept: bool
    reason: FeedbackReason | None = None
    status: int | None = None
    unshown: tuple[str, ...] = ()
    detail: str = ""


def feedback_body(search_id: str, called: Iterable[str]) -> bytes:
    """The body of ``POST /v1/tool-discovery/feedback``."""
    names = [n for n in dict.fromkeys(called) if isinstance(n, str) and n]
    return _ENCODER.encode({"search_id": search_id, "called": names})


def reported(status: int, body: bytes) -> Reported:
    """What a feedback's answer says (``Reported``)."""
    if not 200 <= status < 300:
        return Reported(False, "http_status", status, detail=body[:200].decode(errors="replace"))
    try:
        answer = _FEEDBACK.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        return Reported(False, "bad_response", status, detail=str(exc)[:200])
    return Reported(answer.kept, None, status, tuple(answer.unshown))
