"""Learned evidence: what a deployment's model called after past searches, read for a new one.

A past search with feedback is an event: its pattern's vector and hashed terms, the tools it
showed and the ones the model then called. For a new pattern ``q``, each event ``e`` near it
votes for every tool it showed, in the scope's own words::

    w(q, e)  = ((cos(q, e) - radius) / (1 - radius)) * jaccard(q, e) ** overlap * decay(e)
    W        = sum of w over the events near q
    called   = sum of w over the events that showed the tool and saw it called (0 unless at
               least ``support`` of them did)
    ignored  = sum of w over the events that showed it and saw another tool (or none) called
    learned  = (called - negative * ignored) / (W + prior), ``lone`` in place of ``prior``
               for a tool one event alone called

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
  tool most near patterns called leads; ``prior`` damps little support, ``lone`` a single
  call (as likely wrong as the model's calls are); ``decay`` halves a vote's weight every
  ``half_life`` days.

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

import msgspec
import numpy as np
import numpy.typing as npt

from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.tokenize import tokenize

IntArray = npt.NDArray[np.int64]
#: Each hashed term's IDF over a catalog's tools, and the IDF of a term no tool holds.
TermWeights = tuple[Mapping[int, float], float]
SECONDS_PER_DAY = 86_400.0
_GENERATIONS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Keep:
    """How long feedback counts: its weight halves every ``half_life`` days and it is
    dropped after ``ttl`` days; one caller's newest ``per_caller`` records count at most
    (``_kept``: ``TOOL_SELECTOR_LEARN_CALLER_SHARE`` of ``TOOL_SELECTOR_LEARN_MAX_EVENTS``)."""

    half_life: float = 30.0
    ttl: float = 180.0
    per_caller: int = 10_000


@dataclass(frozen=True, slots=True)
class LearnRule:
    """How near feedback votes (the module): ``radius``, the least cosine between two
    patterns for a vote; ``overlap``, the power of their IDF-weighted Jaccard; ``negative``,
    a shown-and-not-called vote's weight against a called one; ``prior``, vote weight that
    damps a little support; ``lone``, the same for a tool one near event alone called (a
    call that is as likely wrong as the model's calls are); ``support``, the least near
    events that called a tool before it gains (at 2, one event alone moves nothing);
    ``keep``, how long feedback counts. The service's values: ``fitted.LEARN``."""

    radius: float = 0.6
    overlap: float = 2.0
    negative: float = 0.0
    prior: float = 0.1
    lone: float = 0.1
    support: float = 2.0
    keep: Keep = Keep()


def pattern_terms(text: str, key: bytes = b"") -> tuple[int, ...]:
    """The pattern's distinct terms (``tokenize``), each kept as an 8-byte hash under ``key``
    (``terms_key``; none: unkeyed, and a word list finds the words again): the words are not
    stored as text, and two patterns' terms still compare."""
    return tuple(sorted({_hash(t, key) for t in tokenize(text)}))


def terms_key(secret: str) -> bytes:
    """The key of the term hashes for a secret (``TOOL_SELECTOR_LEARN_TERMS_KEY``); empty for
    none (unkeyed, as before the setting)."""
    return hashlib.blake2b(secret.encode(), digest_size=32).digest() if secret else b""


def tool_identity(name: str, description: str) -> str:
    """A tool's identity across catalogs: its name and description (16 hex digits), so a
    catalog change that leaves a tool alone keeps its evidence."""
    return hashlib.blake2b(f"{name}\x00{description}".encode(), digest_size=8).hexdigest()


def term_hash(term: str, key: bytes = b"") -> int:
    """A term as events keep it (``pattern_terms``)."""
    return _hash(term, key)


def _hash(term: str, key: bytes) -> int:
    digest = hashlib.blake2b(term.encode(), digest_size=8, key=key).digest()
    return int.from_bytes(digest, "big") >> 1


class Shown(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """A search the service answered, as the learner keeps it: ``tools`` (identities,
    ``tool_identity``) and ``names`` in the answer's order; ``vector``: the first model's unit
    vector of the pattern, float32 bytes (none, nor ``terms``, for a search answered while no
    model was loaded: its feedback is refused, never an event); ``terms``: ``pattern_terms``.

    ``gc=False`` (``Called`` too): strings, numbers, bytes and tuples of them can never be
    part of a reference cycle, and a replica keeps up to 100,000 of these: tracked, they made
    each full collection 46-51 ms (13-16 untracked; ``loadtests.remember``, 2026-12-07)."""

    id: str
    scope: str
    caller: str
    at: float
    vector: bytes
    terms: tuple[int, ...]
    tools: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def unit(self) -> FloatArray:
        """``vector`` read as floats (a view of its bytes)."""
        return np.frombuffer(self.vector, dtype=np.float32)


class Called(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """A search's feedback, the event the evidence is built from: the search (what it
    showed), which of its tools the model called (identities; empty: none); ``retry``: the
    same caller's search just before it in the scope saw nothing called."""

    search: Shown
    called: tuple[str, ...]
    retry: bool = False

    @property
    def vector(self) -> FloatArray:
        return self.search.unit


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
    def of(cls, events: Iterable[Called], rule: LearnRule, now: float) -> Evidence:
        """The events ``rule`` keeps (younger than ``ttl``; each caller's newest, at most
        ``per_caller`` of them), as arrays. They are read by one model, the newest event's:
        an event of another width (a changed encoder) is none, nor is one with no vector (a
        search answered while no model was loaded, kept by an older version), which would
        otherwise set the width and leave the scope with no event."""
        kept = [e for e in _kept(list(events), rule, now) if e.vector.size]
        if kept:
            width = kept[-1].vector.shape
            kept = [e for e in kept if e.vector.shape == width]
        tools: dict[str, int] = {}
        for e in kept:
            for identity in e.search.tools:
                tools.setdefault(identity, len(tools))
        dim = kept[0].vector.shape[-1] if kept else 0
        vectors = (
            np.stack([e.vector for e in kept]).astype(np.float32)
            if kept
            else np.zeros((0, dim), np.float32)
        )
        return cls(
            vectors,
            [frozenset(e.search.terms) for e in kept],
            shown=[np.asarray([tools[t] for t in e.search.tools], np.int64) for e in kept],
            called=[np.asarray([tools[t] for t in e.called if t in tools], np.int64) for e in kept],
            at=np.asarray([e.search.at for e in kept], np.float64),
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
    agreeing = np.zeros(len(evidence.tools), np.int64)
    for i, w in zip(*votes, strict=True):
        shown[evidence.shown[i]] += w
        called[evidence.called[i]] += w
        agreeing[evidence.called[i]] += 1
    called[agreeing < rule.support] = 0.0
    lone = (agreeing == 1) & (agreeing >= rule.support)  # one call, and it counts
    prior = np.where(lone, rule.lone, rule.prior)
    score = (called - rule.negative * (shown - called)) / (float(sum(votes[1])) + prior)
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
    weight = weight * 0.5 ** (age / rule.keep.half_life)
    return near.tolist(), weight.tolist()


def _jaccard(a: frozenset[int], b: frozenset[int], idf: TermWeights | None) -> float:
    """Jaccard of two term sets, each term weighing its IDF over the catalog's tools when
    ``idf`` is given (a word most tools share tells little; a term no tool holds, most)."""
    if idf is None:
        return len(a & b) / len(a | b)
    weights, unseen = idf
    shared = sum(weights.get(t, unseen) for t in a & b)
    return shared / sum(weights.get(t, unseen) for t in a | b)


def _kept(events: list[Called], rule: LearnRule, now: float) -> list[Called]:
    """The events younger than ``ttl``, oldest first, each caller's newest ``per_caller`` at
    most: one caller can fill only part of a shared scope, whatever it sends (the rest is
    the other callers'), and a small caller is never cut for a big one."""
    keep = rule.keep
    young = sorted((e for e in events if now - _when(e) <= keep.ttl * SECONDS_PER_DAY), key=_when)
    count: dict[str, int] = {}
    kept = []
    for e in reversed(young):
        caller = e.search.caller
        count[caller] = count.get(caller, 0) + 1
        if count[caller] <= keep.per_caller:
            kept.append(e)
    return kept[::-1]


def _when(e: Called) -> float:
    return e.search.at
