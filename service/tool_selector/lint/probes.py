"""Each tool's own probe queries, ranked by the service's ``Selector``: which tools none of
them finds (``unreachable``).

A tool's probes are what a model that wants it is likely to type: its bare name's words (a
model searches for the capability, not the server), the first sentence of its description
and each required parameter's description. A probe finds its tool when the service's answer
to it (the names ``select`` returns, relevance bar included) holds the tool within
``top_k``. A tool that none of its own probes finds will hardly be found by anyone else's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tool_selector.lint.words import apart, quoted
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.selector import Selector
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
    its text came from (``name``, ``description`` or ``parameter``)."""

    tool: int
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Answered:
    """A probe, the name of its tool and the service's answer to it."""

    probe: Probe
    tool_name: str
    names: tuple[str, ...]

    @property
    def found(self) -> bool:
        return self.tool_name in self.names


def first_sentence(text: str) -> str:
    """The description's first sentence (at most ``MAX_PROBE_CHARS`` characters)."""
    head = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()
    return head[:MAX_PROBE_CHARS]


def probes_of(texts: Sequence[ToolText]) -> list[Probe]:
    """Every tool's distinct, non-empty probes, tool by tool."""
    out: list[Probe] = []
    for i, text in enumerate(texts):
        seen: set[str] = set()
        candidates = [("name", " ".join(split_identifier(text.bare_name)))]
        candidates.append(("description", first_sentence(text.description)))
        candidates += [("parameter", p[:MAX_PROBE_CHARS]) for p in text.required]
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
    vectors = encoder.encode(texts)
    for text, vec in zip(texts, vectors, strict=True):
        row = np.ascontiguousarray(vec, dtype=np.float32)
        row.setflags(write=False)
        selector.queries.put((encoder.model_id, text), row)


def answer(
    selector: Selector,
    source: ToolSource,
    texts: Sequence[ToolText],
    probes: Sequence[Probe],
    top_k: int,
) -> tuple[list[Answered], set[str]]:
    """The service's answer to every probe over the catalog of ``source``, and which ranking
    paths answered (``hybrid``, ``static``, ``lexical``)."""
    out: list[Answered] = []
    paths: set[str] = set()
    for probe in probes:
        outcome = selector.select(Ask(pattern=probe.text, tools=source, top_k=top_k))
        out.append(Answered(probe, texts[probe.tool].name, tuple(outcome.ranking.names)))
        paths.add(outcome.path)
    return out, paths


def unreachable(texts: Sequence[ToolText], answered: Sequence[Answered]) -> list[Finding]:
    """A finding per tool that none of its own probes found, with the tools answered in its
    place (to its description probe, else its first probe)."""
    by_tool: dict[int, list[Answered]] = {}
    for a in answered:
        by_tool.setdefault(a.probe.tool, []).append(a)
    out = []
    for i, mine in by_tool.items():
        if any(a.found for a in mine):
            continue
        best = next((a for a in mine if a.probe.source == "description"), mine[0])
        out.append(_finding(texts, i, mine, best))
    return out


def _finding(
    texts: Sequence[ToolText], i: int, mine: Sequence[Answered], best: Answered
) -> Finding:
    name = texts[i].name
    rivals = [n for n in best.names if n != name]
    positions = {t.name: j for j, t in enumerate(texts)}
    words = apart(texts, [i, *(positions[n] for n in rivals[:1])]) if rivals else {}
    own = words.get(name, [])
    said = "; ".join(f"{a.probe.source} '{a.probe.text[:60]}'" for a in mine)
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
    return Finding(
        kind="unreachable",
        tools=[name],
        detail=f"none of its {len(mine)} probes ({said}) finds it in the answer",
        fix=fix,
        displaced_by=rivals,
        apart=words,
    )
