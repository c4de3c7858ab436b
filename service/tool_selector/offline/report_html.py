"""The shadow-compare HTML report: one self-contained file, charts drawn by pygal.

pygal draws each chart as inline SVG (axis titles, rotated labels, its own CSS and a small
inline config script, no external asset): the file opens offline. Chosen over matplotlib
(99 MB more installed) and plotly (69 MB, plus 4.6 MB of JavaScript in every report) for
about 1 MB; measurements in docs/client.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from html import escape
from typing import Any

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1180px;color:#222}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border:1px solid #ddd;
padding:4px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5}.num{text-align:right}
.grid{display:flex;gap:1rem;flex-wrap:wrap}code{background:#f3f3f3;padding:0 3px}
.desc{color:#555;font-size:12px;display:block;margin:0 0 4px}figure{margin:0}
"""
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
_STYLE: dict[str, Any] = {
    "font_family": _FONT,
    "background": "white",
    "plot_background": "white",
    "foreground": "#333",
    "foreground_strong": "#111",
    "foreground_subtle": "#777",
    "label_font_size": 12,
    "major_label_font_size": 12,
    "title_font_size": 14,
    "legend_font_size": 12,
    "value_font_size": 11,
    "tooltip_font_size": 12,
    "colors": ("#4e79a7", "#e15759", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1"),
}
WIDTH, HEIGHT = 560, 340


@cache
def _pygal() -> tuple[Any, Any]:
    """pygal's bar chart classes, imported on first use, without the import hook it installs.

    pygal 3.1.3 appends ``PluginImportFixer`` (a ``find_module``-only finder for its map
    plugins, unused here) to ``sys.meta_path`` when imported; from then on Python 3.11 warns
    (``ImportWarning``) on every failed import in the process. It is taken out again here.
    """
    import pygal  # noqa: PLC0415

    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != "pygal"]
    return pygal.Bar, pygal.StackedBar


@cache
def _style() -> Any:
    from pygal.style import Style  # noqa: PLC0415

    return Style(**_STYLE)


def chart(
    title: str,
    x_title: str,
    y_title: str,
    labels: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    stacked: bool = False,
) -> str:
    """A bar chart (stacked when asked) as inline SVG, with a title and both axis titles."""
    longest = max((len(label) for label in labels), default=0)
    bar, stacked_bar = _pygal()
    bars = (stacked_bar if stacked else bar)(
        style=_style(),
        js=[],
        disable_xml_declaration=True,
        explicit_size=True,
        width=WIDTH * 2 if len(labels) > 8 else WIDTH,
        height=HEIGHT + (60 if longest > 8 else 0),
        title=title,
        x_title=x_title,
        y_title=y_title,
        x_label_rotation=35 if longest > 8 or len(labels) > 8 else 0,
        truncate_label=28,
        truncate_legend=-1,
        show_legend=len(series) > 1,
        legend_at_bottom=True,
        print_values=not stacked,
        print_zeroes=False,
        min_scale=2,
        max_scale=6,
        y_labels_major_every=None,
        margin=12,
        no_data_text="no data",
    )
    bars.x_labels = list(labels)
    for name, values in series.items():
        bars.add(name, list(values))
    return f"<figure>{bars.render(is_unicode=True)}</figure>"


def _bin_label(lo: float, hi: float) -> str:
    if hi >= 1e8:
        return f">={lo:g}"
    if lo == 1.0 and hi > 1.0:
        return "1"
    return f"{lo:g}-{hi:g}"


def _hist(bins: list[list[float]], title: str, x_title: str, y_title: str) -> str:
    """A histogram; empty bins past the last one used are left out."""
    used = [i for i, (_, _, count) in enumerate(bins) if count]
    bins = bins[: max(used, default=len(bins) - 1) + 2]
    labels = [_bin_label(lo, hi) for lo, hi, _ in bins]
    return chart(title, x_title, y_title, labels, {y_title: [c for _, _, c in bins]})


def _counts(title: str, x_title: str, y_title: str, counts: Mapping[str, float]) -> str:
    return chart(title, x_title, y_title, list(counts), {y_title: list(counts.values())})


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return escape(str(value))


def _kv_table(rows: Sequence[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{escape(k)}</th><td class=num>{_fmt(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _names(names: Sequence[str] | None, descriptions: Mapping[str, str]) -> str:
    if names is None:
        return "<em>unknown</em>"
    if not names:
        return "<em>(abstained)</em>"
    return "".join(
        f"<code>{escape(n)}</code><span class=desc>{escape(descriptions.get(n, ''))}</span>"
        for n in names
    )


def _disagreements(summary: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{escape(d['pattern'] or '(redacted)')}</td>"
        f"<td>{_names(d['selector'], d.get('descriptions', {}))}</td>"
        f"<td>{_names(d['relevance'], d.get('descriptions', {}))}</td>"
        f"<td class=num>{_fmt(d['jaccard'])}</td></tr>"
        for d in summary["disagreements"]
    )
    if not rows:
        return "<p>None.</p>"
    shown = len(summary["disagreements"])
    return (
        f"<p>{shown} of {summary['disagreement_count']} shown; each pick with its description."
        "</p><table><tr><th>pattern</th><th>selector picks</th><th>relevance picks</th>"
        f"<th>Jaccard</th></tr>{rows}</table>"
    )


def _decision_sections(summary: Mapping[str, Any]) -> list[str]:
    lat, agr, abst = summary["latency_ms"], summary["agreement"], summary["abstentions"]
    top1_yes = round((agr["top1_rate"] or 0) * agr["top1_comparable"])
    top1 = {"agree": top1_yes, "disagree": agr["top1_comparable"] - top1_yes}
    return [
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
        _hist(lat["histogram"], f"Selector latency, {lat['count']} calls", "latency (ms)", "calls"),
        '<h2 id="outcomes">Outcomes</h2>',
        _counts("Outcomes", "ok or fail-open reason", "decisions", summary["outcomes"]),
        '<h2 id="agreement">Agreement with relevance</h2><div class="grid">',
        _counts("Top-1 pick (both sides answered)", "first picks", "decisions", top1),
        _hist(agr["jaccard_histogram"], "Jaccard", "shared / union of picks", "decisions"),
        _hist(agr["overlap_histogram"], "overlap@k", "shared / longer list", "decisions"),
        '</div><h2 id="abstentions">Abstentions</h2>',
        _counts("Who returned nothing", "side that abstained", "decisions", abst),
        '<h2 id="disagreements">Disagreements, side by side</h2>',
        _disagreements(summary),
    ]


def _fail_open_table(reasons: Sequence[Mapping[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td><code>{escape(r['status'])}</code></td><td class=num>{d['count']}</td>"
        f"<td><code>{escape(d['detail'])}</code></td></tr>"
        for r in reasons
        for d in r["details"]
    )
    if not rows:
        return "<p>No fail-open logged.</p>"
    return (
        "<table><tr><th>fail-open reason</th><th>searches</th><th>detail logged</th></tr>"
        f"{rows}</table>"
    )


def _timeline(proxy: Mapping[str, Any]) -> str:
    line = proxy["timeline"]
    statuses = list(proxy["searches"]["by_status"])
    series = {s: [row.get(s, 0) for row in line["rows"]] for s in statuses}
    title = f"Searches per {line['unit']} ({line['undated']} undated not shown)"
    labels = [row["at"] for row in line["rows"]]
    return chart(title, f"time (UTC, per {line['unit']})", "searches", labels, series, stacked=True)


def _kept(proxy: Mapping[str, Any]) -> str:
    req, lazy, s = proxy["requests"], proxy["lazy_loading"], proxy["searches"]
    labels = [
        f"request filtering ({req['count']})",
        f"lazy_loading ({lazy['count']})",
        f"searches ({s['count']})",
    ]
    series = {
        "kept / returned": [req["kept"], lazy["kept"], s["returned_tools"]],
        "deferred / not returned": [
            req["deferred"],
            lazy["deferred"],
            s["deferred_tools"] - s["returned_tools"],
        ],
    }
    return chart(
        "Tools kept vs deferred", "proxy step (lines)", "tools", labels, series, stacked=True
    )


def _reasons(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in counts.items()) or "none"


def _proxy_sections(summary: Mapping[str, Any]) -> list[str]:
    proxy, replay = summary.get("proxy"), summary.get("proxy_replay", {})
    if not proxy:
        return []
    s = proxy["searches"]
    results = {str(k): v for k, v in s["answered_results"].items()}
    return [
        '<h2 id="proxy">The proxy\'s own outcomes</h2>',
        _kv_table(
            [
                ("searches logged", s["count"]),
                ("fail-open", s["fail_open"]),
                ("replayed", replay.get("replayed")),
                ("not replayed", _reasons(replay["not_replayed"])),
                ("catalog", replay.get("catalog")),
                ("catalog tools", replay.get("catalog_tools")),
            ]
        ),
        '<div class="grid">',
        _counts("Searches by status", "status logged", "searches", s["by_status"]),
        _timeline(proxy),
        _counts("Tools returned by answered searches", "tools returned", "searches", results),
        _kept(proxy),
        "</div><h3>Fail-open reasons and their details</h3>",
        _fail_open_table(proxy["fail_open_reasons"]),
    ]


def _lines_section(summary: Mapping[str, Any]) -> list[str]:
    lines = summary.get("lines")
    if not lines:
        return []
    rows = [(f"used: {k}", v) for k, v in lines["used"].items()]
    rows += [(f"unusable: {k}", v) for k, v in lines["unusable"].items()]
    return ['<h2 id="lines">Every input line</h2>', _kv_table([("lines", lines["total"]), *rows])]


def render(summary: dict[str, Any]) -> str:
    """The whole report for a ``shadow_compare.summarize`` result."""
    source = "replayed against " + summary["url"] if summary.get("url") else "captured decisions"
    sections = [
        f"<h1>tool-selector shadow compare</h1><p>{summary['decisions']} decisions, "
        f"{escape(source)}; input <code>{escape(str(summary.get('capture', '')))}</code>.</p>",
        *_lines_section(summary),
        *_proxy_sections(summary),
        *_decision_sections(summary),
        '<h2 id="raw">Summary JSON</h2>',
        f"<pre>{escape(json.dumps(summary, indent=2))}</pre>",
    ]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>tool-selector shadow compare</title><style>{_CSS}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
    )


def lint_section(report: Mapping[str, Any]) -> str:
    """The catalog report (``tool-selector lint``) as one section: the probes' recall, the
    findings by kind (a chart), and a table of every finding with its fix."""
    recall = report["recall"]
    kinds: dict[str, float] = {}
    for finding in report["findings"]:
        kinds[finding["kind"]] = kinds.get(finding["kind"], 0) + 1
    rows = "".join(
        f"<tr><td><code>{escape(f['kind'])}</code></td>"
        f"<td>{''.join(f'<code>{escape(t)}</code> ' for t in f['tools']) or '(catalog)'}</td>"
        f"<td>{escape(f['detail'])}{_instead(f)}</td><td>{escape(f['fix'])}</td></tr>"
        for f in report["findings"]
    )
    summary = _kv_table(
        [
            ("tools", report["tools"]),
            ("ranked by", report["ranking"]),
            (f"own probes found in the top {report['top_k']}", recall["found"]),
            ("own probes", recall["probes"]),
            ("tools reached by a probe", recall["tools_reached"]),
            ("findings", len(report["findings"])),
        ]
    )
    chart_svg = _counts("Findings by kind", "kind", "findings", kinds) if kinds else ""
    return (
        f'<h2 id="lint">Catalog report <code>{escape(report["catalog"])}</code></h2>'
        f'<div class="grid"><div>{summary}</div>{chart_svg}</div>'
        "<table><tr><th>kind</th><th>tools</th><th>what</th><th>fix</th></tr>"
        f"{rows}</table>"
    )


def _instead(finding: Mapping[str, Any]) -> str:
    names = finding.get("displaced_by") or []
    if not names:
        return ""
    return "<span class=desc>answered instead: " + ", ".join(escape(n) for n in names) + "</span>"


def lint_page(report: Mapping[str, Any], title: str) -> str:
    """A self-contained page holding ``lint_section`` for one catalog file."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>tool-selector lint: {escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>tool-selector lint</h1><p>catalog <code>{escape(title)}</code></p>"
        + lint_section(report)
        + "</body></html>\n"
    )
