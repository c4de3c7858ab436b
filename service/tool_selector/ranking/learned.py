"""Learned evidence: what a deployment's model called after past searches, read for a new one.

A past search with feedback is an event: its pattern's vector and hashed terms, the tools it
showed and the ones the model then called. For a new pattern ``q``, each event ``e`` near it
votes for every tool it showed, in the scope's own words::

    w(q, e)  = ((cos(q, e) - radius) / (1 - radius)) * jaccard(q, e) ** overlap * decay(e)
    W        = sum of w over the events near q       (no column when W < support)
    called   = sum of w over the events that showed the tool and saw it called
    ignored  = sum of w over the events that showed it and saw another tool (or none) called
    learned  = (called - negative * ignored) / (W + prior)

- ``cos`` over the first model's unit vectors; only events at ``radius`` or nearer vote, so
  a pattern of another need moves nothing (a vote among near patterns: Ratel's graph from
  query clusters to the tools they invoked, without clusters).
- ``jaccard`` of the two patterns' term sets (``tokenize``'s, hashed): two requests for
  sibling tools ("get the key" / "get the secret") are near in the embedding but differ in
  the word that tells the siblings apart, so each mostly votes for its own.
- the ignored votes are the negative evidence (toolrank's hard negatives): a tool shown
  often and not called for a kind of need sinks for it, a sibling that was shown beside the
  one called included; a popular tool gains only where it was called.
- a tool's column is its share of the near votes, less its share of ignored ones, so the
  tool most near patterns called leads; ``prior`` damps little support; ``decay`` halves a
  vote's weight every ``half_life`` days.

The fused score adds ``FusionParams.learn_weight * learned`` (``fusion.TERMS``). With no
event near a pattern the column is absent and the answer is what it was with no evidence.
Constants: ``fitted.LEARN``, chosen on the dev splits (docs/quality.md, "Learning from what
the model calls").
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.tokenize import tokenize

IntArray = npt.NDArray[np.int64]
#: Each hashed term's IDF over a catalog's tools, and the IDF of a term no tool holds.
TermWeights = tuple[Mapping[int, float], float]
SECONDS_PER_DAY = 86_400.0
#: Events any caller keeps in a scope whatever the others' (``LearnRule.caller_share``).
CALLER_FLOOR = 50
_GENERATIONS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class LearnRule:
    """How events vote (module docstring): ``radius``, ``overlap`` (the Jaccard power),
    ``negative`` (an ignored vote's weight against a called one), ``prior``, ``support``
    (least total vote weight before any tool moves), ``half_life`` and ``ttl`` in days (an
    event older than ``ttl`` is dropped), and ``caller_share`` (``_kept``)."""

    radius: float = 0.6
    overlap: float = 2.0
    negative: float = 0.0
    prior: float = 0.1
    support: float = 0.02
    half_life: float = 30.0
    ttl: float = 180.0
    caller_share: float = 0.25


def pattern_terms(text: str) -> tuple[int, ...]:
    """The pattern's distinct terms (``tokenize``), each kept as an 8-byte hash: the words
    are never stored, and two patterns' terms still compare."""
    return tuple(sorted({_hash(t) for t in tokenize(text)}))


def tool_identity(name: str, description: str) -> str:
    """A tool's identity across catalogs: its name and description (16 hex digits), so a
    catalog change that leaves a tool alone keeps its evidence."""
    return hashlib.blake2b(f"{name}\x00{description}".encode(), digest_size=8).hexdigest()


def term_hash(term: str) -> int:
    """A term as events keep it (``pattern_terms``)."""
    return _hash(term)


def _hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big") >> 1


@dataclass(frozen=True, slots=True)
class Event:
    """One search with feedback: when (seconds since the epoch), who reported it, its
    pattern's unit vector and term hashes, the tools it showed (identities) and those called
    (a subset; empty: none)."""

    at: float
    caller: str
    vector: FloatArray
    terms: tuple[int, ...]
    shown: tuple[str, ...]
    called: tuple[str, ...]


class Evidence:
    """One scope's events as arrays, with an index from term to the events holding it.

    Built once per change of the scope's events (``of``); read by any number of searches.
    The tools are slots (``slot``): an event's shown and called tools are slot arrays.
    """

    def __init__(
        self,
        vectors: FloatArray,
        terms: Sequence[frozenset[int]],
        *,
        shown: Sequence[IntArray],
        called: Sequence[IntArray],
        at: FloatArray,
        tools: dict[str, int],
    ) -> None:
        self.vectors, self.terms, self.shown, self.called, self.at = (
            vectors,
            terms,
            shown,
            called,
            at,
        )
        self.tools = tools
        #: Which build this is: a catalog's slots into it are kept per generation.
        self.generation = next(_GENERATIONS)
        postings: dict[int, list[int]] = {}
        for i, held in enumerate(terms):
            for term in held:
                postings.setdefault(term, []).append(i)
        self._postings = {t: np.asarray(ids, dtype=np.int64) for t, ids in postings.items()}

    @classmethod
    def of(cls, events: Iterable[Event], rule: LearnRule, now: float) -> Evidence:
        """The events ``rule`` keeps (younger than ``ttl``; each caller's newest, at most
        ``caller_share`` of them), as arrays."""
        kept = _kept(list(events), rule, now)
        if kept:  # read by one model: a record of another's width (a changed encoder) is none
            width = kept[-1].vector.shape
            kept = [e for e in kept if e.vector.shape == width]
        tools: dict[str, int] = {}
        for e in kept:
            for identity in e.shown:
                tools.setdefault(identity, len(tools))
        dim = kept[0].vector.shape[-1] if kept else 0
        vectors = (
            np.stack([e.vector for e in kept]).astype(np.float32)
            if kept
            else np.zeros((0, dim), np.float32)
        )
        return cls(
            vectors,
            [frozenset(e.terms) for e in kept],
            shown=[np.asarray([tools[t] for t in e.shown], np.int64) for e in kept],
            called=[np.asarray([tools[t] for t in e.called if t in tools], np.int64) for e in kept],
            at=np.asarray([e.at for e in kept], np.float64),
            tools=tools,
        )

    def __len__(self) -> int:
        return len(self.terms)

    def candidates(self, terms: Iterable[int]) -> IntArray:
        """The events that share a term with the pattern (the others' Jaccard is 0)."""
        lists = [self._postings[t] for t in terms if t in self._postings]
        if not lists:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(lists))


def learned_scores(
    evidence: Evidence,
    vector: FloatArray,
    terms: tuple[int, ...],
    slots: IntArray,
    *,
    rule: LearnRule,
    now: float,
    idf: TermWeights | None = None,
) -> FloatArray | None:
    """Each catalog tool's ``learned`` (module docstring) for a pattern of unit ``vector``
    and ``terms``; ``slots``: each catalog tool's slot in ``evidence`` (-1: never shown).
    ``None`` when no event votes (the answer is then the one without evidence)."""
    votes = _votes(evidence, vector, terms, rule=rule, now=now, idf=idf)
    if votes is None:
        return None
    called = np.zeros(len(evidence.tools), np.float64)
    shown = np.zeros(len(evidence.tools), np.float64)
    for i, w in zip(*votes, strict=True):
        shown[evidence.shown[i]] += w
        called[evidence.called[i]] += w
    total = float(sum(votes[1]))
    if total < rule.support:
        return None
    score = (called - rule.negative * (shown - called)) / (total + rule.prior)
    out = np.zeros(len(slots), np.float32)
    known = slots >= 0
    out[known] = score[slots[known]]
    return out if out.any() else None


def _votes(
    evidence: Evidence,
    vector: FloatArray,
    terms: tuple[int, ...],
    *,
    rule: LearnRule,
    now: float,
    idf: TermWeights | None,
) -> tuple[list[int], list[float]] | None:
    """The events that vote for a pattern and each one's weight ``w(q, e)``."""
    if not len(evidence) or not terms or vector.shape != evidence.vectors.shape[1:]:
        return None
    near = evidence.candidates(terms)
    cos = evidence.vectors[near] @ vector if near.size else np.zeros(0, np.float32)
    close = cos >= rule.radius
    if not close.any():
        return None
    near, cos = near[close], cos[close]
    mine = frozenset(terms)
    overlap = np.asarray([_jaccard(mine, evidence.terms[i], idf) for i in near], np.float64)
    age = np.maximum(now - evidence.at[near], 0.0) / SECONDS_PER_DAY
    weight = (cos - rule.radius) / (1 - rule.radius) * overlap**rule.overlap
    weight = weight * 0.5 ** (age / rule.half_life)
    return near.tolist(), weight.tolist()


def _jaccard(a: frozenset[int], b: frozenset[int], idf: TermWeights | None) -> float:
    """Jaccard of two term sets, each term weighing its IDF over the catalog's tools when
    ``idf`` is given (a word most tools share tells little; a term no tool holds, most)."""
    if idf is None:
        return len(a & b) / len(a | b)
    weights, unseen = idf
    shared = sum(weights.get(t, unseen) for t in a & b)
    return shared / sum(weights.get(t, unseen) for t in a | b)


def _kept(events: list[Event], rule: LearnRule, now: float) -> list[Event]:
    """The events younger than ``ttl``, oldest first, each caller's newest up to their cap:
    a caller's events may be at most ``caller_share`` of what the scope keeps, that is
    ``caller_share / (1 - caller_share)`` times the others' (at least ``CALLER_FLOOR``; a
    scope's only caller is not capped). One caller cannot make a shared scope's evidence
    their own by flooding it."""
    young = sorted((e for e in events if now - e.at <= rule.ttl * SECONDS_PER_DAY), key=_when)
    mine: dict[str, int] = {}
    for e in young:
        mine[e.caller] = mine.get(e.caller, 0) + 1
    ratio = rule.caller_share / max(1e-9, 1 - rule.caller_share)
    cap = {
        c: n if n == len(young) else max(CALLER_FLOOR, int(ratio * (len(young) - n)))
        for c, n in mine.items()
    }
    count: dict[str, int] = {}
    kept = []
    for e in reversed(young):
        count[e.caller] = count.get(e.caller, 0) + 1
        if count[e.caller] <= cap[e.caller]:
            kept.append(e)
    return kept[::-1]


def _when(e: Event) -> float:
    return e.at
