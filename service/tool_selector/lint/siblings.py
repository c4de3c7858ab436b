"""Sibling findings: tools near-identical to the ranker that its answers confuse.

Two tools are alike when both arms of the ranking see them as nearly the same text: the
cosine of their embeddings (the matrix the service ranks with) is at least ``dense_min``,
and their BM25 similarity is at least ``bm25_min``. BM25 similarity of ``a`` to ``b`` is
``bm25(a's words -> b) / bm25(a's words -> a)`` over the catalog's own index (how close
``b`` comes to ``a``'s own score when ``a``'s text is the query), taken both ways, the
smaller kept. Each tool and the tools alike to it make a group (``groups``).

Alike is not yet confused. A group is reported only where a probe that says what one of
its tools does (its description's or search text's first sentence, or its name's words:
``DOING``) is answered with another of its tools before it (``Misled``): that tool's
users land on its sibling. A required parameter's description is not such a probe: it
names what the tool takes, often the object a sibling lists or gets, and no rewording of
the tool's own description moves its answer. The finding holds the group's tools that the
misled probes join, the words only each of them has (``words.apart``) and the probes,
and findings are ordered by what they cost: misled probes, then the places their tools
fell behind the sibling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tool_selector.lint.probes import Answered
from tool_selector.lint.words import Vocabulary, apart, quoted
from tool_selector.ranking.bm25 import LexicalIndex
from tool_selector.ranking.checkpoints import checkpoint
from tool_selector.ranking.dense import FloatArray, normalise_rows
from tool_selector.ranking.text import ToolText
from tool_selector_client.catalog_lint import Finding, Misled

#: Probe sources that say what a tool does (see the module).
DOING = frozenset({"description", "search_text", "name"})
#: Misled probes a finding's detail quotes.
QUOTED = 3


@dataclass(frozen=True, slots=True)
class Thresholds:
    """How alike two tools must be to both arms to be siblings (tuned on azure_mcp's dev
    split: the pairs behind its R@1 losses, docs/quality.md)."""

    dense_min: float = 0.88
    bm25_min: float = 0.2


@dataclass(frozen=True, slots=True)
class Alike:
    """A catalog's sibling groups and the similarities they were read from."""

    groups: list[list[int]]
    dense: FloatArray | None
    bm25: FloatArray


def bm25_similarity(texts: Sequence[ToolText], index: LexicalIndex) -> FloatArray:
    """(n, n) BM25 similarity, symmetric (see the module); the diagonal is 1."""
    n = len(texts)
    sim = np.zeros((n, n), dtype=np.float32)
    for i, text in enumerate(texts):
        checkpoint()  # n queries over n tools: an abandoned report stops here
        words = text.name_tokens() + text.description_tokens() + text.search_tokens()
        query = list(dict.fromkeys(words))
        scores = index.scores(query)
        if scores[i] > 0:
            sim[i] = scores / scores[i]
    return np.minimum(sim, sim.T)


def dense_similarity(matrix: FloatArray) -> FloatArray:
    """(n, n) cosine of the tools' embeddings."""
    unit = normalise_rows(np.asarray(matrix, dtype=np.float32))
    return np.asarray(unit @ unit.T, dtype=np.float32)


def groups(dense: FloatArray | None, bm25: FloatArray, limits: Thresholds) -> list[list[int]]:
    """Sibling groups: each tool with every tool alike to it, a group inside another
    dropped; groups may overlap (a tool alike to two that are not alike to each other is in
    both of their groups; linking by chains grew groups of 100+ tools on azure_mcp)."""
    alike = bm25 >= limits.bm25_min
    if dense is not None:
        alike &= dense >= limits.dense_min
    np.fill_diagonal(alike, False)
    found = {tuple(sorted({i, *np.nonzero(alike[i])[0].tolist()})) for i in range(len(alike))}
    sets = [set(g) for g in found if len(g) > 1]
    return sorted(sorted(g) for g in sets if not any(g < other for other in sets))


def alike(
    texts: Sequence[ToolText],
    index: LexicalIndex,
    matrix: FloatArray | None,
    limits: Thresholds | None = None,
) -> Alike:
    """The catalog's sibling groups over both arms (``matrix``: the tool vectors the
    answers were ranked with; ``None``: BM25 alone)."""
    bm25 = bm25_similarity(texts, index)
    dense = None if matrix is None else dense_similarity(matrix)
    return Alike(groups(dense, bm25, limits or Thresholds()), dense, bm25)


def misled(
    texts: Sequence[ToolText], answered: Sequence[Answered], group: Sequence[int], top_k: int
) -> list[Misled]:
    """The ``DOING`` probes of ``group``'s tools answered with another of its tools before
    their own (``answered``: the first such), most costly first (``fallen``)."""
    names = {texts[i].name for i in group}
    out = []
    for a in answered:
        if a.probe.tool not in group or a.probe.source not in DOING:
            continue
        own = a.names.index(a.tool_name) + 1 if a.tool_name in a.names else None
        other = next((n for n in a.names[: (own or top_k + 1) - 1] if n in names), None)
        if other is not None:
            out.append(Misled(a.tool_name, a.probe.source, a.probe.text, other, own))
    return sorted(out, key=lambda m: -fallen(m, top_k))


def fallen(probe: Misled, top_k: int) -> int:
    """The places a misled probe's tool fell from first (absent from the answer: to
    ``top_k + 1``)."""
    return (probe.rank or top_k + 1) - 1


def confused(
    texts: Sequence[ToolText], alike: Alike, answered: Sequence[Answered], top_k: int
) -> list[tuple[list[int], list[Misled]]]:
    """Per group, the tools its misled probes join (each joined set of two or more, a set
    inside another dropped) with those probes."""
    position = {t.name: i for i, t in enumerate(texts)}
    by_tool: dict[int, list[Answered]] = {}
    for a in answered:
        by_tool.setdefault(a.probe.tool, []).append(a)
    found: dict[tuple[int, ...], list[Misled]] = {}
    for group in alike.groups:
        mine = [a for i in group for a in by_tool.get(i, ())]
        probes = misled(texts, mine, group, top_k)
        for part in _joined([(position[m.tool], position[m.answered]) for m in probes]):
            held = [m for m in probes if position[m.tool] in part]
            if len(held) > len(found.get(tuple(part), ())):
                found[tuple(part)] = held
    sets = [set(k) for k in found]
    return [(list(k), v) for k, v in found.items() if not any(set(k) < s for s in sets)]


def _joined(edges: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The connected parts of the graph of ``edges``, each sorted."""
    parts: list[set[int]] = []
    for a, b in edges:
        touching = [p for p in parts if a in p or b in p]
        merged = {a, b}.union(*touching)
        parts = [p for p in parts if p not in touching] + [merged]
    return sorted(sorted(p) for p in parts)


def siblings(
    texts: Sequence[ToolText],
    alike: Alike,
    words: Vocabulary,
    answered: Sequence[Answered],
    top_k: int,
) -> list[Finding]:
    """A ``siblings`` finding per set of confused siblings (``confused``), most costly
    first, with the words that tell its tools apart and the probes they confuse."""
    found = [_finding(texts, alike, words, part, probes)
             for part, probes in confused(texts, alike, answered, top_k)]  # fmt: skip

    def cost(f: Finding) -> tuple[int, int, list[str]]:
        return -len(f.misled), -sum(fallen(m, top_k) for m in f.misled), f.tools

    return sorted(found, key=cost)


def _finding(
    texts: Sequence[ToolText],
    alike: Alike,
    words: Vocabulary,
    part: list[int],
    probes: list[Misled],
) -> Finding:
    block = np.ix_(part, part)
    said = apart(words, part)
    return Finding(
        kind="siblings",
        tools=[texts[i].name for i in part],
        detail=_detail(len(part), probes),
        fix=_fix(said),
        apart=said,
        dense=None if alike.dense is None else round(float(alike.dense[block].min()), 3),
        bm25=round(float(alike.bm25[block].min()), 3),
        misled=probes,
    )


def _detail(size: int, probes: Sequence[Misled]) -> str:
    quotes = "; ".join(
        f"{m.source} '{m.probe[:60]}' of {m.tool} is answered with {m.answered} "
        + (f"before it (it is #{m.rank})" if m.rank else "and not it")
        for m in probes[:QUOTED]
    )
    more = f"; {len(probes) - QUOTED} more" if len(probes) > QUOTED else ""
    lands = "1 own probe lands" if len(probes) == 1 else f"{len(probes)} own probes land"
    return f"{size} tools the ranker confuses: {lands} on a sibling: {quotes}{more}"


def _fix(words: dict[str, list[str]]) -> str:
    bare = [n for n, w in words.items() if not w]
    if bare:
        return (
            f"{', '.join(bare)}: no word of its text is its own in this group; write what "
            "sets it apart (its object, its result) first in its description or search_text"
        )
    leads = "; ".join(f"{quoted(w[:3])} for {n}" for n, w in words.items())
    return f"make the words that set each apart lead its description or search_text: {leads}"
