"""The shadow-compare HTML report: one self-contained file, plots drawn as inline SVG."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f5f5f5}.num{text-align:right}
.grid{display:flex;gap:2rem;flex-wrap:wrap}code{background:#f3f3f3;padding:0 3px}
svg text{font:11px system-ui,sans-serif}
"""


def bar_chart(
    labels: Sequence[str], values: Sequence[float], title: str, color: str = "#4e79a7"
) -> str:
    """A vertical bar chart as an SVG string."""
    width, height, pad, top = max(320, 46 * len(labels) + 60), 220, 40, 24
    peak = max(values, default=0) or 1
    step = (width - pad - 10) / max(1, len(labels))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}">',
        f'<text x="{width / 2}" y="14" text-anchor="middle">{escape(title)}</text>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - 10}" y2="{height - pad}" '
        'stroke="#999"/>',
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = (height - pad - top) * value / peak
        x = pad + i * step + step * 0.15
        y = height - pad - h
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{step * 0.7:.1f}" height="{h:.1f}" '
            f'fill="{color}"><title>{escape(label)}: {value:g}</title></rect>'
        )
        parts.append(
            f'<text x="{x + step * 0.35:.1f}" y="{y - 3:.1f}" text-anchor="middle">{value:g}</text>'
        )
        parts.append(
            f'<text x="{x + step * 0.35:.1f}" y="{height - pad + 14}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _bin_label(lo: float, hi: float, unit: str = "") -> str:
    if hi >= 1e8:
        return f">={lo:g}{unit}"
    if lo == 1.0 and hi > 1.0:
        return "1"
    return f"{lo:g}-{hi:g}{unit}"


def _hist_chart(bins: list[list[float]], title: str, unit: str = "", color: str = "") -> str:
    labels = [_bin_label(lo, hi, unit) for lo, hi, _ in bins]
    return bar_chart(labels, [c for _, _, c in bins], title, color or "#4e79a7")


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return escape(str(value))


def _kv_table(rows: Sequence[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{escape(k)}</th><td class=num>{_fmt(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _names(names: Sequence[str] | None) -> str:
    if names is None:
        return "<em>unknown</em>"
    if not names:
        return "<em>(abstained)</em>"
    return "<br>".join(f"<code>{escape(n)}</code>" for n in names)


def render(summary: dict[str, Any]) -> str:
    """The whole report for a ``shadow_compare.summarize`` result."""
    lat, agr, abst = summary["latency_ms"], summary["agreement"], summary["abstentions"]
    outcomes = summary["outcomes"]
    source = "replayed against " + summary["url"] if summary.get("url") else "captured decisions"
    examples = "".join(
        f"<tr><td>{escape(d['pattern'] or '(redacted)')}</td><td>{_names(d['selector'])}</td>"
        f"<td>{_names(d['relevance'])}</td><td class=num>{_fmt(d['jaccard'])}</td></tr>"
        for d in summary["disagreements"]
    )
    top1_yes = round((agr["top1_rate"] or 0) * agr["top1_comparable"])
    sections = [
        f"<h1>tool-selector shadow compare</h1><p>{summary['decisions']} decisions, "
        f"{escape(source)}.</p>",
        '<h2 id="summary">Summary</h2>',
        _kv_table(
            [
                ("decisions", summary["decisions"]),
                ("latency p50 (ms)", lat["p50"]),
                ("latency p95 (ms)", lat["p95"]),
                ("latency p99 (ms)", lat["p99"]),
                ("compared with relevance", agr["compared"]),
                ("top-1 agreement", agr["top1_rate"]),
                ("mean overlap@k", agr["overlap_mean"]),
                ("mean Jaccard", agr["jaccard_mean"]),
                ("disagreements", summary["disagreement_count"]),
            ]
        ),
        '<h2 id="latency">Latency distribution</h2>',
        _hist_chart(lat["histogram"], f"selector latency, {lat['count']} calls", " ms"),
        '<h2 id="outcomes">Outcomes</h2>',
        bar_chart(list(outcomes), list(outcomes.values()), "ok or fail-open reason", "#59a14f"),
        '<h2 id="agreement">Agreement with relevance</h2><div class="grid">',
        bar_chart(
            ["agree", "disagree"],
            [top1_yes, agr["top1_comparable"] - top1_yes],
            "top-1 (both sides answered)",
            "#f28e2b",
        ),
        _hist_chart(agr["jaccard_histogram"], "Jaccard", color="#76b7b2"),
        _hist_chart(agr["overlap_histogram"], "overlap@k", color="#76b7b2"),
        "</div>",
        '<h2 id="abstentions">Abstentions</h2>',
        bar_chart(list(abst), list(abst.values()), "who returned nothing", "#e15759"),
        '<h2 id="disagreements">Disagreements, side by side</h2>',
        "<table><tr><th>pattern</th><th>selector</th><th>relevance</th><th>Jaccard</th></tr>"
        f"{examples}</table>"
        if examples
        else "<p>None.</p>",
        '<h2 id="raw">Summary JSON</h2>',
        f"<pre>{escape(json.dumps(summary, indent=2))}</pre>",
    ]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>tool-selector shadow compare</title><style>{_CSS}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
    )
