"""Rendering an eval run: a markdown table per dataset, and the JSON results file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tool_selector.evaluation.runner import EvalReport

COLUMNS = ("r@1", "r@5", "ndcg@5", "mrr", "complete@5", "empty%", "ms/query")


def markdown(report: EvalReport, command: str) -> str:
    """The results as markdown: one table per dataset, then the no-match rates."""
    cfg = report.config
    k = cfg.k
    cols = tuple(c.replace("5", str(k)) for c in COLUMNS)
    lines = [
        f"Split `{cfg.split}` (dev = first byte of sha256(query id) even; tuned on dev only), "
        f"k={k}, whole catalog ranked per query. Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC "
        f"in {report.seconds:.0f} s: `{command}`",
        "",
    ]
    for res in report.results:
        lines += [
            f"### {res.dataset} ({res.tools} tools, {res.queries} queries)",
            "",
            "| ranker | " + " | ".join(cols) + " |",
            "|---|" + "---:|" * len(cols),
        ]
        for name, summary in res.rankers.items():
            cells = " | ".join(f"{summary.get(c, '')}" for c in cols)
            lines.append(f"| {name} | {cells} |")
        lines.append("")
    lines += [
        "### No useful match",
        "",
        "| catalog | empty answers on its own queries | abstained on negatives | negatives |",
        "|---|---:|---:|---:|",
    ]
    for res in report.results:
        neg = "-" if res.abstain_negative is None else f"{res.abstain_negative}%"
        lines.append(f"| {res.dataset} | {res.abstain_positive}% | {neg} | {res.negatives} |")
    return "\n".join(lines) + "\n"


def write(report: EvalReport, json_path: Path, command: str) -> Path:
    """Write the JSON results and, next to it, the markdown table (``.md``)."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    data = report.as_dict() | {
        "command": command,
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
    }
    json_path.write_text(json.dumps(data, indent=2) + "\n")
    md_path = json_path.with_suffix(".md")
    md_path.write_text("# Retrieval quality\n\n" + markdown(report, command))
    return md_path
