"""Rendering an eval run: markdown tables (overview, per data set, per category) and JSON.

Everything renders from the JSON form of a run (``EvalReport.as_dict()`` plus ``command``
and ``date``), so the tables can be regenerated from ``reports/quality.json`` alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tool_selector.offline.evaluation.runner import EvalReport

COLUMNS = ("r@1", "r@5", "ndcg@5", "mrr", "complete@5", "empty%", "abstain%", "ms/query")
#: Rows whose no-match behaviour the overview reports, with their short labels.
ABSTAINING = {
    "service": "service",
    "service lexical": "lexical",
    "service cold (static)": "cold",
    "service cold (shortlist)": "shortlist",
}


def results_dict(report: EvalReport, command: str) -> dict[str, Any]:
    """The JSON form of a run, stamped with its command and date."""
    return report.as_dict() | {
        "command": command,
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
    }


def markdown(report: EvalReport, command: str) -> str:
    """The results of ``report`` as markdown (see ``render``)."""
    return render(results_dict(report, command))


def render(data: Mapping[str, Any]) -> str:
    """Overview tables, then per data set its full table and its per-category table."""
    k = data["k"]
    limit = f"at most {data['limit']} queries per set" if data.get("limit") else "whole split"
    lines = [
        f"Split `{data['split']}` ({data['split_rule']}; tuned on dev only), {limit}, "
        f"k={k}, whole catalog ranked per query. Run {data['date']} in "
        f"{data['seconds']:.0f} s: `{data['command']}`",
        "",
        f"### R@{k} (R@1) per set",
        "",
        *overview(data["results"], k),
        "",
        "### No useful match",
        "",
        *no_match_table(data["results"]),
        "",
    ]
    for res in data["results"]:
        lines += [*dataset_section(res, k), ""]
    return "\n".join(lines)


def overview(results: list[Mapping[str, Any]], k: int) -> list[str]:
    """One row per ranker, one column per set: ``R@k (R@1)``."""
    if not results:
        return ["(no data sets)"]
    head = [f"{r['dataset']} ({r['tools']:,} tools, {_asked(r)})" for r in results]
    lines = ["| ranker | " + " | ".join(head) + " |", "|---|" + "---:|" * len(results)]
    for ranker in _rankers(results):
        cells = []
        for res in results:
            s = res["rankers"].get(ranker)
            cells.append("-" if s is None else f"{s.get(f'r@{k}', 0.0):.1f} ({s['r@1']:.1f})")
        lines.append(f"| {ranker} | " + " | ".join(cells) + " |")
    return lines


def no_match_table(results: list[Mapping[str, Any]]) -> list[str]:
    """Per set: empty answers on real needs and abstention on no-match queries, for each
    abstaining row the run has."""
    rows = [name for name in ABSTAINING if any(name in r["rankers"] for r in results)]
    empty = [f"{ABSTAINING[name]} empty%" for name in rows]
    abstain = [f"{ABSTAINING[name]} abstain%" for name in rows]
    head = ["set", "real needs", *empty, "no-match queries", *abstain, "synthetic negatives"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for res in results:
        got = [res["rankers"].get(name, {}) for name in rows]
        neg = res.get("abstain_negative_pct")
        cells = [
            res["dataset"],
            str(res["queries"]),
            *(str(g.get("empty%", "-")) for g in got),
            str(res["no_match_queries"]),
            *(str(g.get("abstain%", "-")) for g in got),
            "-" if neg is None else f"{neg}% abstained of {res['negatives']}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def dataset_section(res: Mapping[str, Any], k: int) -> list[str]:
    """A set's full table per ranker, then its per-category table."""
    cols = tuple(c.replace("5", str(k)) for c in COLUMNS)
    lines = [
        f"### {res['dataset']} ({res['tools']} tools, {res['queries']} real needs, "
        f"{res['no_match_queries']} no-match; query encode {res['encode_ms_per_query']} "
        f"ms/query, batched)",
        "",
        "| ranker | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for name, summary in res["rankers"].items():
        cells = " | ".join(str(summary.get(c, "-")) for c in cols)
        lines.append(f"| {name} | {cells} |")
    categories = res.get("categories") or {}
    if len(categories) > 1 or (categories and next(iter(categories)) != ""):
        lines += ["", *category_table(res["dataset"], categories, k)]
    return lines


def category_table(dataset: str, categories: Mapping[str, Any], k: int) -> list[str]:
    """Rows: categories; cells: ``R@1 / R@k`` per ranker, or ``abstain N%`` for no-match."""
    rankers = _rankers(list(categories.values()))
    lines = [
        f"{dataset} by category: R@1 / R@{k} on real needs; abstain% on no-match queries",
        "",
        "| category | n | " + " | ".join(rankers) + " |",
        "|---|---:|" + "---:|" * len(rankers),
    ]
    for name, cat in categories.items():
        n = cat["queries"] + cat["no_match"]
        cells = [_cell(cat["rankers"].get(r, {}), cat, k) for r in rankers]
        lines.append(f"| {name or '-'} | {n} | " + " | ".join(cells) + " |")
    return lines


def _cell(summary: Mapping[str, Any], cat: Mapping[str, Any], k: int) -> str:
    parts = []
    if cat["queries"]:
        parts.append(f"{summary.get('r@1', 0.0):.1f} / {summary.get(f'r@{k}', 0.0):.1f}")
    if cat["no_match"]:
        parts.append(f"abstain {summary.get('abstain%', 0.0):.1f}%")
    return " · ".join(parts)


def _asked(res: Mapping[str, Any]) -> str:
    """``N q`` real needs, ``+ M no-match`` when there are some."""
    extra = f" + {res['no_match_queries']} no-match" if res.get("no_match_queries") else ""
    return f"{res['queries']:,} q{extra}"


def _rankers(results: list[Mapping[str, Any]]) -> list[str]:
    """Every ranker name in first-seen order."""
    return list(dict.fromkeys(name for res in results for name in res["rankers"]))


def write(data: Mapping[str, Any], json_path: Path) -> Path:
    """Write the JSON results (``results_dict``) and, next to it, the markdown (``.md``)."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=2) + "\n")
    md_path = json_path.with_suffix(".md")
    md_path.write_text("# Retrieval quality\n\n" + render(data))
    return md_path
