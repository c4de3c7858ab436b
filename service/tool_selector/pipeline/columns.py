"""What the arms of the ranking exchange (``pipeline.arms``): the request as they read it
(``ArmRequest``: the catalog entry, the pattern read once, the clock), what they give
(``Columns``: BM25, the answering dense arm's ``Cosines``, the learned column, the steps),
what they read from (``Sources``: the models, the tool and query vectors, the rules, the
learned evidence) and which arm and encoders ranked (``Provenance``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from tool_selector.embeddings.encoder import Encoder, Ensemble, weights_digest
from tool_selector.pipeline.catalog_store import Found
from tool_selector.pipeline.query_vectors import Ahead, QueryVectors
from tool_selector.pipeline.tool_vectors import ToolMatrix, ToolVectors
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import Rules
from tool_selector.ranking.fusion import FusionParams
from tool_selector.ranking.glossary import Glossary
from tool_selector.ranking.language import reads_foreign
from tool_selector.ranking.learned import Evidence
from tool_selector.ranking.ranker import Clause, LexicalReading, Query
from tool_selector.ranking.steps import clauses, locate
from tool_selector_client.wire import Filters

#: The ranking path a caller is told (``X-Tool-Selector-Ranking``).
RankingPath = Literal["hybrid", "static", "lexical"]
ArmName = Literal["dense", "multilingual", "static", "shortlist", "lexical"]
#: Whether the encoders that ranked had the whole catalog's vectors (``complete``), some of
#: them did (``partial``: the ensemble's first model alone, a foreign pattern's gloss unread,
#: or the shortlist arm's leaders only), or no model's were read (``none``: the static table
#: or words alone).
Embedded = Literal["complete", "partial", "none"]
#: What a rescue did (``Selector``): the models read the static answer's leaders (``read``:
#: the answer rests on their cosines, a match or not), or the limit declined them
#: (``declined``: the static answer stands); ``None`` where none was asked.
Rescue = Literal["read", "declined"]


@dataclass(frozen=True, slots=True)
class ReadPattern:
    """A request's pattern as sent (``text``), the English words of its gloss (``gloss``,
    non-English patterns only), whether it reads as not English, and its steps (``steps``:
    a multi-step English pattern's clauses, ``ranking.steps``)."""

    text: str
    gloss: str = ""
    foreign: bool = False
    steps: tuple[str, ...] = ()

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Each step's character span in ``text``."""
        return locate(self.text, self.steps)

    @property
    def words(self) -> str:
        """The pattern as its words are ranked: itself, then its gloss."""
        return f"{self.text} {self.gloss}" if self.gloss else self.text

    def query(self) -> Query:
        """The lexical query: terms and name words of ``words`` (the gloss too), the exact-
        and near-name rules on ``text`` (a name is matched as sent, not with its gloss)."""
        return replace(Query.parse(self.words), pattern=self.text)


def read_pattern(pattern: str, rules: Rules, glossary: Glossary | None, gloss: bool) -> ReadPattern:
    """``pattern`` as the arms read it: a non-English one (``reads_foreign``) followed by the
    English words of its gloss, when the glossary or the multilingual arm (``gloss``) can
    read it; an English one with its steps (``rules.steps``)."""
    if (not gloss and glossary is None) or not reads_foreign(pattern):
        return ReadPattern(pattern, steps=clauses(pattern, rules.steps) if rules.steps else ())
    words = glossary.gloss(pattern) if glossary is not None else []
    return ReadPattern(pattern, " ".join(words), foreign=True)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Which arm's cosines ranked an answer (``lexical``: none did), the encoders they came
    from, and whether those had the whole catalog's vectors."""

    arm: ArmName = "lexical"
    encoders: tuple[Encoder, ...] = ()
    embedded: Embedded = "none"

    @property
    def model(self) -> str | None:
        """The encoders' model ids joined with ``+``; ``None`` on the lexical path."""
        return "+".join(e.model_id for e in self.encoders) or None

    @property
    def weights(self) -> str | None:
        """Their weights' digests joined with ``+``; ``None`` when one cannot say."""
        digests = [weights_digest(e) for e in self.encoders]
        return "+".join(d for d in digests if d) if digests and all(digests) else None


@dataclass(frozen=True, slots=True)
class Cosines:
    """A dense arm's answer: its cosines (``scores``), fused with ``params``, on ``path``;
    the tool matrix and the query-side encoder they came from (the context and the steps
    read them too); what ranked (``provenance``); whether the query vector was cached; and
    the first model's cosines the relevance bar reads when ``scores`` are a mean (``bar``)."""

    scores: FloatArray
    params: FusionParams
    path: RankingPath
    matrix: FloatArray
    encoder: Encoder
    provenance: Provenance
    query_cached: bool = False
    bar: FloatArray | None = None


@dataclass(frozen=True, slots=True)
class Columns:
    """What the arms give the ranking for one request: the lexical query and its BM25
    scores, the cosines of the dense arm that answered (none: words alone, fused with
    ``lexical``), the steps' columns, the scope's learned column (``ranking.learned``; none:
    no evidence near the pattern), the embedding attempt's cache counts (``tools``) and what
    the dense arm read of the words while its second model encoded (``read_ahead``: the
    ranking's to take, ``ranker.LexicalReading``), and whether an arm awaits its vectors
    (``awaited``)."""

    query: Query
    bm25: FloatArray
    lexical: FusionParams
    cosines: Cosines | None = None
    tools: ToolMatrix = ToolMatrix()
    clauses: tuple[Clause, ...] = ()
    learned: FloatArray | None = None
    read_ahead: LexicalReading | None = None
    #: The multilingual arm would rank this (foreign) pattern but its vectors of the catalog
    #: are not in yet: another arm's answer is ``partial``, not the fully embedded one.
    awaited: bool = False
    #: The shortlist would have read the static arm's leaders but the deadline had no room
    #: for them (``Selector`` reads them as a rescue where the answer says no match, when
    #: they are predicted within ``Shortlist.rescue``).
    unread: bool = False

    @property
    def dense(self) -> FloatArray | None:
        return None if self.cosines is None else self.cosines.scores

    @property
    def params(self) -> FusionParams:
        return self.lexical if self.cosines is None else self.cosines.params

    @property
    def path(self) -> RankingPath:
        return "lexical" if self.cosines is None else self.cosines.path

    @property
    def provenance(self) -> Provenance:
        return Provenance() if self.cosines is None else self.cosines.provenance


class EvidenceSource(Protocol):
    """A scope's learned evidence (``learning.learner.Learner``): ``None`` when it has none;
    ``terms_key``: the key its patterns' terms are hashed under."""

    terms_key: bytes

    def evidence(self, scope: str) -> Evidence | None: ...


class Models(Protocol):
    """What the arms read that is attached as it loads (``None``: not loaded, or off): the
    dense arm's ensemble, the static table, the multilingual model, the learned evidence."""

    @property
    def encoders(self) -> Ensemble | None: ...

    @property
    def static(self) -> Encoder | None: ...

    @property
    def multilingual(self) -> Encoder | None: ...

    @property
    def learning(self) -> EvidenceSource | None: ...


@dataclass(frozen=True, slots=True)
class Sources:
    """What every arm reads from: the models, the tool and query vectors, the rules, and
    each scope's learned evidence (the models' ``learning``)."""

    models: Models
    tools: ToolVectors
    queries: QueryVectors
    rules: Rules


@dataclass(frozen=True, slots=True)
class ArmRequest:
    """One request as the arms read it: its catalog entry, its pattern, when its catalog
    was at hand (``started``: the embedding deadline bounds the embedding work the request
    waits for, counted from then, so a new catalog's build, 30-60 ms at 300 tools, leaves
    its first answer the room any later answer has), the stage timings it adds to, whose
    learned evidence it reads (``scope``; none: no evidence), the query vectors the
    helper is encoding ahead for it (``ahead``, ``QueryVectors.early``), and the caller's
    filters (none: none sent; the ranking applies them, the shortlist picks its leaders
    among the tools they leave in). ``rescue``: the static answer said no match with its
    leaders unread, and the shortlist reads them now if they are predicted to fit
    ``Shortlist.rescue`` (or what is left of the deadline, if more; ``Selector``)."""

    found: Found
    pattern: ReadPattern
    started: float
    timings: dict[str, float]
    scope: str | None = None
    ahead: Ahead = field(default_factory=dict)
    filters: Filters | None = None
    rescue: bool = False


class Arm(Protocol):
    """An arm of the table: the columns it was given, with its own added."""

    def read(self, request: ArmRequest, columns: Columns) -> Columns: ...


@contextmanager
def timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Adds the block's seconds to ``timings[stage]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start
