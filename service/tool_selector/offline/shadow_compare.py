"""``tool-selector shadow-compare``: replay decisions and proxy searches, report the agreement.

Input is JSONL; every line is used or counted by the reason it cannot be (``lines`` in the
summary). A line is one of:

- the client's capture (``tool_selector_client.capture``): ``pattern``, ``tools``,
  ``top_k``, ``always_keep``, ``selected``, ``relevance``, ``latency_ms``, ``outcome``
  (keys are also looked up under other names: ``query``, ``deferred_tools``, ...; a
  latency that is not a finite number is left out, so no summary figure is ``NaN``);
- a line of the proxy's own ``tool_discovery.jsonl`` (``tool_selector.offline.proxy_log``): its
  searches, fail-open reasons and tool filtering are reported as the proxy logged them, and
  with ``--catalog`` (the proxy's tool list) and ``--url`` each logged search query is sent
  again to that service and ranked by the proxy's ``relevance`` scorer.

With ``--url`` every decision that has a pattern is sent again to that service (through the
companion client, so fail-open outcomes are reported as the proxy would see them);
without it the captured picks and latencies are reported as they are. The relevance picks
are taken from the record, or recomputed from the pattern and the tool descriptions.
Writes a self-contained HTML report and a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from tool_selector.offline.proxy_log import Event, Search, outcomes, parse_event
from tool_selector.pipeline.surrogates import mend_surrogates
from tool_selector_client.compare import Agreement, agreement
from tool_selector_client.definitions import by_name, described, tool_description, tool_name
from tool_selector_client.relevance import relevance_select

_PATTERN_KEYS = ("pattern", "query", "search_query")
_TOOLS_KEYS = ("tools", "deferred_tools", "tool_names", "candidates")
_SELECTED_KEYS = ("selected", "selected_names", "results", "result_names")
_TOP_K_KEYS = ("top_k", "max_results", "max_search_results")
_LATENCY_KEYS = ("latency_ms", "duration_ms")
#: Outcomes where the service answered, so its picks can be compared.
COMPARABLE = frozenset({"ok", "empty_selection"})
#: Outcomes where no call was made (no latency to report).
NO_CALL = frozenset({"disabled", "empty_pattern", "circuit_open"})
MAX_EXAMPLES = 25
DESCRIPTION_CHARS = 300
LATENCY_EDGES_MS = (0, 2.5, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 1e9)
RATIO_EDGES = (0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.01)


@dataclass(slots=True)
class Case:
    """One captured decision, normalised."""

    pattern: str | None
    tools: list[Any]
    top_k: int = 5
    always_keep: list[str] = field(default_factory=list)
    selected: list[str] | None = None
    relevance: list[str] | None = None
    latency_ms: float | None = None
    outcome: str | None = None


@dataclass(slots=True)
class Row:
    """One decision as reported: our picks, relevance's, and how they agree."""

    case: Case
    ours: list[str]
    outcome: str
    latency_ms: float | None
    relevance: list[str] | None
    agreement: Agreement | None


def _first(record: dict[str, Any], keys: Sequence[str]) -> Any:
    return next((record[k] for k in keys if record.get(k) is not None), None)


def _names(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [v if isinstance(v, str) else str(tool_name(v) or "") for v in value if v]


def _finite(value: Any) -> float | None:
    """``value`` as a latency: a finite number, else ``None`` (a ``NaN`` or ``Infinity``,
    which Python's JSON reader takes, is left out as a missing latency is)."""
    if not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def parse_case(record: Any) -> Case | None:
    """A ``Case`` from one decoded JSON line, or ``None`` when it is not a decision."""
    if not isinstance(record, dict):
        return None
    tools = _first(record, _TOOLS_KEYS)
    if not isinstance(tools, list) or not tools:
        return None
    pattern = _first(record, _PATTERN_KEYS)
    top_k = _first(record, _TOP_K_KEYS)
    latency = _first(record, _LATENCY_KEYS)
    keep = record.get("always_keep")
    return Case(
        pattern=pattern if isinstance(pattern, str) and pattern.strip() else None,
        tools=[{"name": t} if isinstance(t, str) else t for t in tools],
        top_k=top_k if isinstance(top_k, int) and top_k > 0 else 5,
        always_keep=[k for k in keep if isinstance(k, str)] if isinstance(keep, list) else [],
        selected=_names(_first(record, _SELECTED_KEYS)),
        relevance=_names(record.get("relevance")),
        latency_ms=_finite(latency),
        outcome=record["outcome"] if isinstance(record.get("outcome"), str) else None,
    )


@dataclass(slots=True)
class Input:
    """Every line of an input file: used (counted by kind) or counted by why it cannot be."""

    cases: list[Case] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    used: Counter[str] = field(default_factory=Counter)
    unusable: Counter[str] = field(default_factory=Counter)

    @property
    def lines(self) -> int:
        """Lines read (blank ones included)."""
        return self.used.total() + self.unusable.total()


def _used_kind(item: Case | Event) -> str:
    if isinstance(item, Case):
        return "capture decision"
    if isinstance(item, Search):
        return "proxy search"
    return "proxy request filtering" if item.kind == "request" else "proxy lazy_loading"


def _decode(line: str) -> dict[str, Any] | str:
    if not line.strip():
        return "blank line"
    try:
        record = json.loads(mend_surrogates(line.encode()))
    except RecursionError:
        return "not JSON: nested too deep"
    except ValueError:
        return "not JSON"
    return record if isinstance(record, dict) else "JSON but not an object"


def classify(number: int, line: str) -> Case | Event | str:
    """What one input line is: a decision, a proxy event, or the reason it cannot be used."""
    record = _decode(line)
    if isinstance(record, str):
        return record
    event = parse_event(number, record)
    if event is not None:
        return event
    try:
        case = parse_case(record)
    except OverflowError:
        return "a number out of range"
    return case if case is not None else "neither a decision (pattern + tools) nor a proxy event"


def read_input(path: Path) -> Input:
    """Every line of ``path``, used or counted by reason (none dropped silently)."""
    found = Input()
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            item = classify(number, line)
            if isinstance(item, str):
                found.unusable[item] += 1
                continue
            found.used[_used_kind(item)] += 1
            if isinstance(item, Case):
                found.cases.append(item)
            else:
                found.events.append(item)
    return found


def search_cases(
    searches: Sequence[Search], tools: list[Any] | None, top_k: int
) -> tuple[list[Case], Counter[str]]:
    """A case per logged search query over the proxy's tool list; the rest counted by reason."""
    if tools is None:
        return [], Counter({"no --catalog (the proxy's tool list) given": len(searches)})
    cases = [Case(pattern=s.query, tools=tools, top_k=top_k) for s in searches if s.query]
    skipped = len(searches) - len(cases)
    return cases, Counter({"no query logged": skipped} if skipped else {})


def _relevance(case: Case) -> list[str] | None:
    if case.relevance is not None:
        return case.relevance
    if case.pattern is None:
        return None
    return relevance_select(case.pattern, described(case.tools), case.top_k)


def _row(case: Case, ours: list[str], outcome: str, latency_ms: float | None) -> Row:
    relevance = _relevance(case)
    names = by_name(case.tools)
    forced = {k for k in case.always_keep if k in names}
    agree = (
        agreement(ours, relevance, forced)
        if relevance is not None and outcome in COMPARABLE
        else None
    )
    return Row(case, ours, outcome, latency_ms, relevance, agree)


def captured_rows(cases: Iterable[Case]) -> list[Row]:
    """Rows from the captured decisions alone."""
    return [
        _row(
            c,
            c.selected or [],
            c.outcome or ("ok" if c.selected else "empty_selection"),
            c.latency_ms,
        )
        for c in cases
    ]


def replayed_rows(
    cases: Iterable[Case], url: str, token: str | None, timeout_s: float
) -> tuple[list[Row], int]:
    """Rows from sending each case with a pattern to ``url``; also the number skipped."""
    from tool_selector_client.breaker import CircuitBreaker  # noqa: PLC0415
    from tool_selector_client.client import SelectorClient  # noqa: PLC0415

    rows: list[Row] = []
    skipped = 0
    breaker = CircuitBreaker(threshold=0)
    with SelectorClient(
        url, token=token, timeout_s=timeout_s, max_search_results=1000, breaker=breaker
    ) as client:
        for case in cases:
            if case.pattern is None:
                skipped += 1
                continue
            sel = client.select(case.pattern, case.tools, case.top_k, case.always_keep)
            latency_ms = round(sel.latency_s * 1000, 3)
            rows.append(_row(case, list(sel.names), sel.outcome, latency_ms))
    return rows, skipped


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def histogram(values: Sequence[float], edges: Sequence[float]) -> list[list[float]]:
    """``[[low, high, count], ...]`` with ``low <= v < high``; the last bin is closed."""
    bins = [[lo, hi, 0.0] for lo, hi in pairwise(edges)]
    for v in values:
        i = next((i for i, (_, hi, _) in enumerate(bins) if v < hi), len(bins) - 1)
        bins[i][2] += 1
    return bins


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _descriptions(row: Row) -> dict[str, str]:
    """The description of each tool either side picked (as far as the input has one)."""
    named = by_name(row.case.tools)
    picked = dict.fromkeys([*row.ours, *(row.relevance or [])])
    return {n: tool_description(named[n])[:DESCRIPTION_CHARS] for n in picked if n in named}


def _disagreements(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [
        {
            "pattern": r.case.pattern,
            "selector": r.ours,
            "relevance": r.relevance,
            "jaccard": r.agreement.jaccard,
            "descriptions": _descriptions(r),
        }
        for r in rows
        if r.agreement is not None and r.agreement.jaccard is not None and r.agreement.jaccard < 1
    ]


def summarize(rows: Sequence[Row], *, source: str, extra: dict[str, Any]) -> dict[str, Any]:
    """The JSON summary of a report."""
    latencies = [
        r.latency_ms for r in rows if r.latency_ms is not None and r.outcome not in NO_CALL
    ]
    compared = [r.agreement for r in rows if r.agreement is not None]
    top1 = [a.top1 for a in compared if a.top1 is not None]
    overlaps = [a.overlap for a in compared if a.overlap is not None]
    jaccards = [a.jaccard for a in compared if a.jaccard is not None]
    abstain = Counter(a.abstain for a in compared)
    disagreements = _disagreements(rows)
    return {
        "source": source,
        **extra,
        "decisions": len(rows),
        "outcomes": dict(Counter(r.outcome for r in rows).most_common()),
        "latency_ms": {
            "count": len(latencies),
            "mean": _mean(latencies),
            **{f"p{q}": percentile(latencies, q) for q in (50, 90, 95, 99)},
            "max": max(latencies) if latencies else None,
            "histogram": histogram(latencies, LATENCY_EDGES_MS),
        },
        "agreement": {
            "compared": len(compared),
            "top1_comparable": len(top1),
            "top1_rate": _mean([1.0 if t else 0.0 for t in top1]),
            "overlap_mean": _mean(overlaps),
            "jaccard_mean": _mean(jaccards),
            "jaccard_histogram": histogram(jaccards, RATIO_EDGES),
            "overlap_histogram": histogram(overlaps, RATIO_EDGES),
        },
        "abstentions": {
            side: abstain.get(side, 0) for side in ("none", "selector", "relevance", "both")
        },
        "disagreements": disagreements[:MAX_EXAMPLES],
        "disagreement_count": len(disagreements),
    }


def _proxy_part(
    found: Input, args: argparse.Namespace, tools: list[Any] | None
) -> tuple[dict[str, Any], list[Case]]:
    """The proxy's own outcomes and the cases replaying its logged searches."""
    if not found.events:
        return {}, []
    searches = [e for e in found.events if isinstance(e, Search)]
    cases, not_replayed = search_cases(searches, tools, args.top_k)
    if not args.url:
        not_replayed = Counter({"no --url given": len(searches)})
        cases = []
    part = {
        "proxy": outcomes(found.events),
        "proxy_replay": {
            "searches": len(searches),
            "replayed": len(cases),
            "not_replayed": dict(not_replayed),
            "catalog": str(args.catalog) if args.catalog else None,
            "catalog_tools": len(tools) if tools is not None else None,
            "top_k": args.top_k,
        },
    }
    return part, cases


def build_summary(
    found: Input, args: argparse.Namespace, tools: list[Any] | None = None
) -> dict[str, Any]:
    """The JSON summary for everything read from the input."""
    extra: dict[str, Any] = {
        "capture": str(args.capture),
        "lines": {
            "total": found.lines,
            "used": dict(found.used.most_common()),
            "unusable": dict(found.unusable.most_common()),
        },
        "unreadable_lines": found.unusable.total(),
    }
    proxy, searches = _proxy_part(found, args, tools)
    extra |= proxy
    if args.url:
        rows, skipped = replayed_rows([*found.cases, *searches], args.url, args.token, args.timeout)
        extra |= {"url": args.url, "skipped_redacted": skipped}
        return summarize(rows, source="replay", extra=extra)
    return summarize(captured_rows(found.cases), source="capture", extra=extra)


def _load(args: argparse.Namespace) -> tuple[Input, list[Any] | None] | str:
    """The input and the tool list, or why they cannot be read."""
    from tool_selector.offline.tool_file import ToolFileError, load_tools  # noqa: PLC0415

    if not args.capture.is_file():
        return f"no such capture file: {args.capture}"
    try:
        tools = load_tools(args.catalog) if args.catalog else None
    except ToolFileError as exc:
        return str(exc)
    found = read_input(args.capture)
    if not found.cases and not found.events:
        return f"{args.capture} holds no decision and no proxy event ({_counts(found.unusable)})"
    return found, tools


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{n} {what}" for what, n in counter.most_common()) or "none"


def _print_proxy(summary: dict[str, Any]) -> None:
    proxy, replay = summary["proxy"], summary["proxy_replay"]
    s, req, lazy = proxy["searches"], proxy["requests"], proxy["lazy_loading"]
    print(
        f"proxy searches: {s['count']} ({_counts(Counter(s['by_status']))}); "
        f"tools returned {s['returned_tools']} of {s['deferred_tools']} deferred"
    )
    for reason in proxy["fail_open_reasons"]:
        print(f"  {reason['status']}: {reason['count']}")
        for d in reason["details"]:
            print(f"    {d['count']:>5}  {d['detail']}")
    print(
        f"request filtering: {req['count']} requests, {req['kept']} tools kept, "
        f"{req['deferred']} deferred; lazy_loading: {lazy['count']} requests, tool "
        f"definitions {lazy['tokens_before']} -> {lazy['tokens_after']} tokens"
    )
    print(
        f"replayed {replay['replayed']} searches over {replay['catalog_tools']} catalog tools; "
        f"not replayed: {_counts(Counter(replay['not_replayed']))}"
    )


def _print_summary(summary: dict[str, Any], args: argparse.Namespace) -> None:
    lines = summary["lines"]
    print(
        f"{args.capture}: {lines['total']} lines; used: {_counts(Counter(lines['used']))}; "
        f"unusable: {_counts(Counter(lines['unusable']))}"
    )
    if "proxy" in summary:
        _print_proxy(summary)
    lat, agr = summary["latency_ms"], summary["agreement"]
    print(
        f"{summary['decisions']} decisions ({summary['source']}); p50 {lat['p50']} ms, "
        f"p95 {lat['p95']} ms; top-1 agreement {agr['top1_rate']}, "
        f"mean Jaccard {agr['jaccard_mean']}; wrote {args.html} and {args.json}"
    )


def run(args: argparse.Namespace) -> int:
    """Build the report; exit 0, or 2 when the input holds nothing to report, or 1 when
    ``--url`` answered none of the replayed requests (a wrong address, a refused body)."""
    from tool_selector.offline.outputs import check_files  # noqa: PLC0415
    from tool_selector.offline.report_html import render  # noqa: PLC0415

    check_files([args.json, args.html])  # before the replay: one line naming it (cli.main)
    loaded = _load(args)
    if isinstance(loaded, str):
        print(f"tool-selector: {loaded}", file=sys.stderr)
        return 2
    found, tools = loaded
    summary = build_summary(found, args, tools)
    answered = {"ok", "empty_selection"} & summary["outcomes"].keys()
    if args.url and not answered:  # a replay nothing answered reports nothing
        outcomes = _counts(Counter(summary["outcomes"]))
        print(f"tool-selector: {args.url} answered none of the replayed requests: {outcomes}",
              file=sys.stderr)  # fmt: skip
        return 1
    args.json.write_text(json.dumps(summary, indent=2) + "\n")
    args.html.write_text(render(summary))
    _print_summary(summary, args)
    return 0
