"""The catalog report: every finding over one catalog, ranked as the service ranks it.

``lint`` finds the catalog as a request would (``Selector.entry``: by its key, else by its
tools), answers every tool's own probes with ``Selector.select`` (``probes``), groups the
alike tools over the matrix the answers used (the model's, else the static arm's, else BM25
alone), answers the rest of their probes that say what they do and keeps the groups those
answers confuse (``siblings``), and adds the findings read from the texts (``checks``).
``render_text`` is the plain-text report, with every character a terminal would not show as
itself written as its escape (``visible``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import get_args

import msgspec

from tool_selector.embeddings.encoder import Ensemble
from tool_selector.learning.learner import Usage
from tool_selector.lint import checks, probes, siblings
from tool_selector.lint.usage import tool_uses, usage_findings
from tool_selector.lint.words import Vocabulary, vocabulary
from tool_selector.pipeline.arms import paired
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogEntry, Found
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
    texts = found.entry.catalog.texts
    keyed = ToolSource.keyed(found.key, source.load)
    answered, paths = probes.answer(selector, keyed, found.entry.catalog,
                                    probes.probes_of(texts), top_k=top_k, every=every)  # fmt: skip
    words = vocabulary(texts)
    confused, also = _confused(selector, found, keyed, answered, words, top_k=top_k, limits=limits)
    uses = tool_uses(texts, usage) if usage else None
    findings = [
        *probes.unreachable(texts, answered, words),
        *confused,
        *checks.collisions(texts),
        *checks.weak_text(texts),
        *usage_findings(uses or ()),
    ]
    reached = {a.probe.tool for a in answered if a.found}
    return LintReport(
        catalog=found.key,
        tools=len(texts),
        ranking="+".join(sorted(paths | also)) or "none",
        top_k=top_k,
        recall=ProbeRecall(len(answered), sum(a.found for a in answered), len(texts), len(reached)),
        findings=sorted(findings, key=lambda f: KIND_ORDER.index(f.kind)),
        seconds=round(time.perf_counter() - started, 2),
        usage=uses or None,
    )


def _confused(
    selector: Selector,
    found: Found,
    source: ToolSource,
    answered: Sequence[probes.Answered],
    words: Vocabulary,
    *,
    top_k: int,
    limits: siblings.Thresholds | None,
) -> tuple[list[Finding], set[str]]:
    """The ``siblings`` findings of the catalog ``found`` (``source``: by its key), and the
    paths that answered the probes they needed: alike tools over the matrix the answers
    used, the probes that say what each of them does (``siblings.DOING``) all asked."""
    entry = selector.catalogs.get(found.key) or found.entry
    texts, catalog = entry.catalog.texts, entry.catalog
    alike = siblings.alike(texts, catalog.index, _matrix(selector, entry), limits)
    grouped = {i for group in alike.groups for i in group}
    asked = {a.probe for a in answered}
    rest = [p for p in probes.probes_of(texts) if p.tool in grouped
            and p.source in siblings.DOING and p not in asked]  # fmt: skip
    more, paths = probes.answer(selector, source, catalog, rest, top_k=top_k, every=True)
    return siblings.siblings(texts, alike, words, [*answered, *more], top_k), paths


def _matrix(selector: Selector, entry: CatalogEntry) -> FloatArray | None:
    """The tool vectors the answers were ranked with: the model's, else the static arm's
    (the tables it read, ``arms.paired``)."""
    static = selector.static
    tables = None if static is None else paired(Ensemble.of(static), selector.encoders)[0]
    for encoder in (selector.encoder, tables):
        matrix = None if encoder is None else entry.matrix(encoder.model_id)
        if matrix is not None:
            return matrix
    return None


def with_findings(report: LintReport, more: Sequence[Finding]) -> LintReport:
    """``report`` with ``more`` findings (a catalog file's: ``lint.entries``), in kind order."""
    if not more:
        return report
    findings = sorted([*more, *report.findings], key=lambda f: KIND_ORDER.index(f.kind))
    return msgspec.structs.replace(report, findings=findings)


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
    return "\n".join(map(visible, lines)) + "\n"


def visible(text: str) -> str:
    """``text`` with each character that is not printable written as ``repr`` writes it
    (``\\x1b``, ``\\t``, ``\\n``, ``\\u202e``, ``\\u200b``): control characters, format
    characters (bidi overrides and isolates, zero-width ones), line and paragraph separators
    and spaces other than ``' '``. A name or description holding them then reads as what it
    is, not as what a terminal does with it (a colour, a reversed line, nothing at all)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _counts(findings: Sequence[Finding]) -> str:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
