"""Context Gateway's own ``tool_discovery.jsonl``: every kind of line it writes, read as it is.

The kinds, by release (from the proxy's source: ``internal/monitoring/types.go`` and the
gateway's telemetry handlers; Go's ``omitempty`` drops zero counts and empty lists):

- **search**, one ``gateway_search_tools`` call:

  - v0.4.0-v0.5.2: no ``event_type``; ``tool_name: "gateway_search_tools"``,
    ``original_content`` the query, ``compressed_content`` the failure detail, ``status``
    ``api_fallback_<reason>``, ``original_bytes`` / ``compressed_bytes`` the deferred and
    returned tool *counts*. Only fail-opens were logged.
  - v0.5.3 on: ``event_type: "tool_search_result"`` with ``query``, ``deferred_count`` (or
    ``original_tool_count``), ``results_count`` (or ``selected_tool_count``),
    ``selected_tools`` (or ``tools_provided``), ``error_detail``, ``timestamp``; ``status``
    is ``api_fallback_<reason>`` on a fail-open and absent when the search was answered.

- **request**: a whole request's tool list filtered before forwarding (``all_tools``,
  ``selected_tools``, ``status`` ``filtered`` / ``passthrough`` / ``skipped_<reason>``); the
  phantom ``gateway_search_tools`` in ``selected_tools`` is not one of the caller's tools.
- **lazy_loading** (v0.5.3 on): the same step with counts only (``tool_count``,
  ``stub_count`` = tools deferred, ``phantom_count``, tool-definition sizes).

A fail-open (``api_fallback_*``) hands the model every deferred tool (v0.4) or the proxy's
own regex matches (v0.5.2 on) instead of the selector's answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

SEARCH_TOOL = "gateway_search_tools"
SEARCH_EVENT = "tool_search_result"
LAZY_EVENT = "lazy_loading"
FALLBACK_PREFIX = "api_fallback"
#: Status of a logged search that the selector answered (the proxy writes none).
ANSWERED = "answered"
MAX_DETAILS = 5
DETAIL_CHARS = 200


@dataclass(frozen=True, slots=True)
class Search:
    """One logged ``gateway_search_tools`` call."""

    line: int
    query: str | None
    status: str
    detail: str | None = None
    deferred: int | None = None
    returned: int | None = None
    selected: tuple[str, ...] | None = None
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Filtering:
    """One request whose tool list the proxy filtered (or passed through)."""

    line: int
    kind: Literal["request", "lazy_loading"]
    status: str
    tools: int | None
    kept: int | None
    deferred: int | None
    tokens_before: int | None = None
    tokens_after: int | None = None
    at: datetime | None = None


Event = Search | Filtering


def _int(record: Mapping[str, Any], *keys: str, default: int | None = None) -> int | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def _str(record: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _names(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if isinstance(v, str))


def _time(record: Mapping[str, Any]) -> datetime | None:
    raw = _str(record, "timestamp")
    if raw is None:
        return None
    try:
        at = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _search(line: int, record: Mapping[str, Any]) -> Search:
    if record.get("event_type") == SEARCH_EVENT:
        status = _str(record, "status") or ANSWERED
        return Search(
            line=line,
            query=_str(record, "query"),
            status=status,
            detail=_str(record, "error_detail"),
            deferred=_int(record, "original_tool_count", "deferred_count", default=0),
            returned=_int(record, "selected_tool_count", "results_count", default=0),
            selected=_names(record.get("selected_tools") or record.get("tools_provided")),
            at=_time(record),
        )
    return Search(  # v0.4.0-v0.5.2: byte fields hold tool counts on these rows
        line=line,
        query=_str(record, "original_content"),
        status=_str(record, "status") or ANSWERED,
        detail=_str(record, "compressed_content"),
        deferred=_int(record, "original_bytes"),
        returned=_int(record, "compressed_bytes"),
        at=_time(record),
    )


def _request(line: int, record: Mapping[str, Any]) -> Filtering:
    every = _names(record.get("all_tools")) or ()
    chosen = set(_names(record.get("selected_tools")) or ())
    kept = sum(1 for name in dict.fromkeys(every) if name in chosen)
    return Filtering(
        line=line,
        kind="request",
        status=_str(record, "status") or "unknown",
        tools=len(set(every)),
        kept=kept,
        deferred=len(set(every)) - kept,
        at=_time(record),
    )


def _lazy(line: int, record: Mapping[str, Any]) -> Filtering:
    tools = _int(record, "tool_count", default=0)
    stubs = _int(record, "stub_count", default=0)
    return Filtering(
        line=line,
        kind="lazy_loading",
        status=_str(record, "status") or "unknown",
        tools=tools,
        kept=None if tools is None or stubs is None else tools - stubs,
        deferred=stubs,
        tokens_before=_int(record, "original_tokens"),
        tokens_after=_int(record, "compressed_tokens"),
        at=_time(record),
    )


def parse_event(line: int, record: Mapping[str, Any]) -> Event | str | None:
    """The proxy event on one decoded line, a reason it cannot be used, or ``None``.

    ``None`` means the line is not one of the proxy's: another reader may take it.
    """
    event_type = record.get("event_type")
    if event_type == SEARCH_EVENT or record.get("tool_name") == SEARCH_TOOL:
        return _search(line, record)
    if event_type == LAZY_EVENT:
        return _lazy(line, record)
    if isinstance(record.get("all_tools"), list):
        return _request(line, record)
    if isinstance(event_type, str):
        return f"proxy event_type {event_type[:40]!r}, not a search or a tool filtering"
    if record.get("pipe_type") is not None:
        return f"proxy pipe_type {str(record['pipe_type'])[:40]!r} line without tools"
    return None


def is_fail_open(status: str) -> bool:
    """Whether a search status is one of the proxy's fail-open reasons."""
    return status.startswith(FALLBACK_PREFIX)


def _details(searches: Sequence[Search]) -> list[dict[str, Any]]:
    by_status: dict[str, Counter[str]] = {}
    for s in searches:
        if is_fail_open(s.status):
            detail = (s.detail or "(none logged)")[:DETAIL_CHARS]
            by_status.setdefault(s.status, Counter())[detail] += 1
    return [
        {
            "status": status,
            "count": sum(details.values()),
            "details": [{"detail": d, "count": n} for d, n in details.most_common(MAX_DETAILS)],
        }
        for status, details in sorted(by_status.items(), key=lambda kv: -sum(kv[1].values()))
    ]


def _bucket(events: Sequence[Event]) -> tuple[str, str]:
    times = [e.at for e in events if e.at is not None]
    span = (max(times) - min(times)).total_seconds() if times else 0
    if span <= 6 * 3600:
        return "minute", "%Y-%m-%d %H:%M"
    if span <= 7 * 86400:
        return "hour", "%Y-%m-%d %H:00"
    return "day", "%Y-%m-%d"


def timeline(searches: Sequence[Search]) -> dict[str, Any]:
    """Searches per time bucket, by status (undated lines counted apart)."""
    unit, fmt = _bucket(searches)
    rows: dict[str, Counter[str]] = {}
    for s in sorted((s for s in searches if s.at is not None), key=lambda s: s.at or 0):
        rows.setdefault(s.at.strftime(fmt) if s.at else "", Counter())[s.status] += 1
    return {
        "unit": unit,
        "rows": [{"at": at, **dict(c)} for at, c in rows.items()],
        "undated": sum(1 for s in searches if s.at is None),
    }


def _total(values: Iterable[int | None]) -> int:
    return sum(v for v in values if v is not None)


def _filtering(rows: Sequence[Filtering]) -> dict[str, Any]:
    return {
        "count": len(rows),
        "by_status": dict(Counter(r.status for r in rows).most_common()),
        "tools": _total(r.tools for r in rows),
        "kept": _total(r.kept for r in rows),
        "deferred": _total(r.deferred for r in rows),
        "tokens_before": _total(r.tokens_before for r in rows),
        "tokens_after": _total(r.tokens_after for r in rows),
    }


def outcomes(events: Sequence[Event]) -> dict[str, Any]:
    """The proxy's own outcomes: searches, fail-open reasons, result counts, kept vs deferred."""
    searches = [e for e in events if isinstance(e, Search)]
    answered = [s for s in searches if not is_fail_open(s.status)]
    filterings = [e for e in events if isinstance(e, Filtering)]
    return {
        "searches": {
            "count": len(searches),
            "by_status": dict(Counter(s.status for s in searches).most_common()),
            "fail_open": sum(1 for s in searches if is_fail_open(s.status)),
            "with_query": sum(1 for s in searches if s.query),
            "deferred_tools": _total(s.deferred for s in searches),
            "returned_tools": _total(s.returned for s in searches),
            "answered_results": dict(sorted(Counter(s.returned or 0 for s in answered).items())),
        },
        "fail_open_reasons": _details(searches),
        "requests": _filtering([f for f in filterings if f.kind == "request"]),
        "lazy_loading": _filtering([f for f in filterings if f.kind == "lazy_loading"]),
        "timeline": timeline(searches),
    }
