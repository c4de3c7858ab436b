"""The catalog report: every finding over one catalog, ranked as the service ranks it.

``lint`` finds the catalog as a request would (``Selector.entry``: by its key, else by its
tools), answers every tool's own probes with ``Selector.select`` (``probes``), groups the
siblings over the matrix the answers used (the model's, else the static arm's, else BM25
alone), and adds the findings read from the texts (``checks``). ``render_text`` is the
plain-text report.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import get_args

from tool_selector.learning.learner import Usage
from tool_selector.lint import checks, probes, siblings
from tool_selector.lint.usage import tool_uses, usage_findings
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogEntry
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.dense import FloatArray
from tool_selector_client.catalog_lint import Finding, FindingKind, LintReport, ProbeRecall

#: Report order: ``FindingKind``'s (what keeps a tool from being found first).
KIND_ORDER: tuple[str, ...] = get_args(FindingKind)


def lint(
    selector: Selector,
    source: ToolSource,
    *,
    top_k: int = 5,
    limits: siblings.Thresholds | None = None,
    every: bool = False,
    usage: Mapping[str, Usage] | None = None,
) -> LintReport:
    """The report on the catalog of ``source``, its probes answered by ``selector``
    (``every``: all of them, else until one finds its tool; see ``probes.answer``), with the
    tools' use in a scope (``usage``, the learner's) when given."""
    started = time.perf_counter()
    found = selector.entry(source)
    catalog = found.entry.catalog
    keyed = ToolSource(found.key, source.load)
    texts = catalog.texts
    asked = probes.probes_of(texts)
    answered, paths = probes.answer(selector, keyed, catalog, asked, top_k=top_k, every=every)
    entry = selector.catalogs.get(found.key) or found.entry
    uses = tool_uses(texts, usage) if usage else None
    findings = [
        *probes.unreachable(texts, answered),
        *siblings.siblings(texts, catalog.index, _matrix(selector, entry), limits),
        *checks.collisions(texts),
        *checks.weak_text(texts),
        *usage_findings(uses or ()),
    ]
    reached = {a.probe.tool for a in answered if a.found}
    return LintReport(
        catalog=found.key,
        tools=len(texts),
        ranking="+".join(sorted(paths)) or "none",
        top_k=top_k,
        recall=ProbeRecall(len(answered), sum(a.found for a in answered), len(texts), len(reached)),
        findings=sorted(findings, key=lambda f: KIND_ORDER.index(f.kind)),
        seconds=round(time.perf_counter() - started, 2),
        usage=uses or None,
    )


def _matrix(selector: Selector, entry: CatalogEntry) -> FloatArray | None:
    """The tool vectors the answers were ranked with: the model's, else the static arm's."""
    for encoder in (selector.encoder, selector.static):
        matrix = None if encoder is None else entry.matrix(encoder.model_id)
        if matrix is not None:
            return matrix
    return None


def render_text(report: LintReport) -> str:
    """The report as plain text: a summary line, then one block per finding."""
    r = report.recall
    lines = [
        f"catalog {report.catalog}: {report.tools} tools, ranked {report.ranking}; "
        f"{r.found}/{r.probes} own probes found their tool in the top {report.top_k}, "
        f"{r.tools_reached}/{r.tools} tools reached; {len(report.findings)} findings "
        f"({_counts(report.findings)})",
    ]
    for f in report.findings:
        lines += ["", f"[{f.kind}] {', '.join(f.tools) or '(catalog)'}", f"  {f.detail}"]
        if f.displaced_by:
            lines.append(f"  answered instead: {', '.join(f.displaced_by)}")
        lines.append(f"  fix: {f.fix}")
    if report.usage:
        lines += ["", "use in this scope (shown / called / called after a second search):"]
        lines += [f"  {u.name}: {u.shown} / {u.called} / {u.after_retry}" for u in report.usage]
    return "\n".join(lines) + "\n"


def _counts(findings: Sequence[Finding]) -> str:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
