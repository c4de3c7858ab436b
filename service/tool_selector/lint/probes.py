"""Each tool's own probe queries, ranked by the service's ``Selector``: which tools none of
them finds (``unreachable``).

A tool's probes are what a model that wants it is likely to type: its bare name's words (a
model searches for the capability, not the server), the first sentence of its description,
the first sentence of its search-only text (what its operator says users ask it with) and
each required parameter's description. A probe finds its tool when the service's answer
to it (the names ``select`` returns, relevance bar included) holds the tool within
``top_k``; a probe that names several tools exactly (a bare name shared across servers)
cannot single one out, so it finds only the one of them the answer puts first. A tool that
none of its own probes finds will hardly be found by anyone else's (``unreachable``); one
that only its name finds (the exact-name rule) is found only by a model that already knows
its name, which a model whose tools are deferred does not (``name_only``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tool_selector.embeddings.encoder import encode_query
from tool_selector.lint.words import Vocabulary, apart, quoted
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.checkpoints import checkpoint
from tool_selector.ranking.dense import windows
from tool_selector.ranking.text import ToolText
from tool_selector.ranking.tokenize import split_identifier
from tool_selector_client.catalog_lint import Finding

_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")
#: Longest probe (characters): a first "sentence" may be a whole unpunctuated paragraph.
MAX_PROBE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe query of the tool at ``tool`` (catalog position); ``source`` says where
    its text came from (``name``, ``description``, ``search_text`` or ``parameter``)."""

    tool: int
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Answered:
    """A probe, the name of its tool, the service's answer to it and the tools the probe
    names exactly (several: a shared name, see the module)."""

    probe: Probe
    tool_name: str
    names: tuple[str, ...]
    named: frozenset[str] = frozenset()

    @property
    def found(self) -> bool:
        if len(self.named) > 1:
            return next((n for n in self.names if n in self.named), None) == self.tool_name
        return self.tool_name in self.names


def first_sentence(text: str) -> str:
    """The description's first sentence (at most ``MAX_PROBE_CHARS`` characters)."""
    head = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()
    return head[:MAX_PROBE_CHARS]


def probes_of(texts: Sequence[ToolText]) -> list[Probe]:
    """Every tool's distinct, non-empty probes, tool by tool, its name's words last (they are
    asked last: see ``answer``)."""
    out: list[Probe] = []
    for i, text in enumerate(texts):
        seen: set[str] = set()
        candidates = [("description", first_sentence(text.description))]
        candidates.append(("search_text", first_sentence(text.search_text)))
        candidates += [("parameter", p[:MAX_PROBE_CHARS]) for p in text.required]
        candidates.append(("name", " ".join(split_identifier(text.bare_name))))
        for source, probe in candidates:
            if probe.strip() and probe.casefold() not in seen:
                seen.add(probe.casefold())
                out.append(Probe(i, source, probe))
    return out


def prefill(selector: Selector, probes: Sequence[Probe]) -> None:
    """Encode every probe the model would encode one by one, in one batched call, into the
    selector's query cache (the answers are the same; batching is several times faster)."""
    encoder = selector.encoder
    if encoder is None:
        return
    texts = list(dict.fromkeys(p.text for p in probes if len(windows(p.text)) == 1))
    if not texts:
        return
    vectors = encode_query(encoder, texts)
    for text, vec in zip(texts, vectors, strict=True):
        row = np.ascontiguousarray(vec, dtype=np.float32)
        row.setflags(write=False)
        selector.queries.put((encoder.model_id, text), row)


def answer(
    selector: Selector,
    source: ToolSource,
    catalog: Catalog,
    probes: Sequence[Probe],
    *,
    top_k: int,
    every: bool = False,
) -> tuple[list[Answered], set[str]]:
    """The service's answer to the probes over the catalog of ``source``, and which ranking
    paths answered (``hybrid``, ``static``, ``lexical``).

    Asked in rounds (every tool's first probe, then every tool's second, ...), each round's
    query vectors encoded in one batch (``prefill``). Unless ``every``, a tool's later probes
    are not asked once one has found it (reachable is all the report needs: thousands of
    tools take seconds, not minutes). A probe that names its tool exactly, and no other, is
    found without ranking: ``rank`` puts a named tool first, past the relevance bar (SPEC
    rule 5). The first probe is always ranked,
    so the catalog's vectors are on hand for the sibling groups.
    """
    mine: dict[int, list[Probe]] = {}
    for probe in probes:
        mine.setdefault(probe.tool, []).append(probe)
    out: list[Answered] = []
    paths: set[str] = set()
    reached: set[int] = set()
    for round_ in range(max((len(v) for v in mine.values()), default=0)):
        asked = [v[round_] for t, v in mine.items() if len(v) > round_]
        asked = [p for p in asked if every or p.tool not in reached]
        prefill(selector, [p for p in asked if not out or not _named(catalog, p)])
        for probe in asked:
            checkpoint()  # a search a probe: an abandoned report stops here
            names = _answer(selector, source, catalog=catalog, probe=probe, top_k=top_k,
                            paths=paths)  # fmt: skip
            named = frozenset(catalog.texts[i].name for i in catalog.exact_matches(probe.text))
            out.append(Answered(probe, catalog.texts[probe.tool].name, names, named))
            if out[-1].found:
                reached.add(probe.tool)
    return out, paths


def _named(catalog: Catalog, probe: Probe) -> bool:
    """Whether ``probe`` names its tool exactly, and no other."""
    return catalog.exact_matches(probe.text) == (probe.tool,)


def _answer(
    selector: Selector,
    source: ToolSource,
    *,
    catalog: Catalog,
    probe: Probe,
    top_k: int,
    paths: set[str],
) -> tuple[str, ...]:
    """The answer's names (only the tool itself when ``_named`` and some path has answered
    already: it comes first), noting the path that answered."""
    if paths and _named(catalog, probe):
        return (catalog.texts[probe.tool].name,)
    outcome = selector.select(Ask(pattern=probe.text, tools=source, top_k=top_k))
    paths.add(outcome.path)
    return tuple(outcome.ranking.names)


def unreachable(
    texts: Sequence[ToolText], answered: Sequence[Answered], words: Vocabulary
) -> list[Finding]:
    """A finding per tool that none of its own probes found (``unreachable``), or only its
    name's words did (``name_only``), with the tools answered in its place (to its
    description probe, else its first probe) and the words it has that the first lacks."""
    by_tool: dict[int, list[Answered]] = {}
    for a in answered:
        by_tool.setdefault(a.probe.tool, []).append(a)
    out = []
    for i, mine in by_tool.items():
        if any(a.found for a in mine if a.probe.source != "name"):
            continue
        best = next((a for a in mine if a.probe.source == "description"), mine[0])
        out.append(_finding(words, i, mine, best, name_only=any(a.found for a in mine)))
    return out


def _finding(
    words: Vocabulary, i: int, mine: Sequence[Answered], best: Answered, *, name_only: bool
) -> Finding:
    texts = words.texts
    name = texts[i].name
    rivals = [n for n in best.names if n != name]
    positions = {t.name: j for j, t in enumerate(texts)}
    said = apart(words, [i, *(positions[n] for n in rivals[:1])]) if rivals else {}
    own = said.get(name, [])
    asked = "; ".join(f"{a.probe.source} '{a.probe.text[:60]}'" for a in mine)
    if not texts[i].description:
        fix = f"give {name} a description (or search_text) that says what it does"
    elif own:
        fix = (
            f"lead the description (or search_text) of {name} with {quoted(own)}, which "
            f"{rivals[0]} lacks, and with what users ask it for"
        )
    else:
        rival = rivals[0] if rivals else "the rest"
        fix = (
            f"write in {name}'s description (or search_text) what sets it apart from "
            f"{rival}: no word of its text is theirs alone"
        )
    detail = f"none of its {len(mine)} probes ({asked}) finds it in the answer"
    if name_only:
        others = "; ".join(f"{a.probe.source} '{a.probe.text[:60]}'" for a in mine
                           if a.probe.source != "name")  # fmt: skip
        detail = "only a search for its name finds it: " + (
            f"none of its other probes ({others}) does" if others else "it has no other probe"
        )
    return Finding(
        kind="name_only" if name_only else "unreachable",
        tools=[name],
        detail=detail,
        fix=fix,
        displaced_by=rivals,
        apart=said,
    )
