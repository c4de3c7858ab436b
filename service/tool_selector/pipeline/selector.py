"""The one ``select``, shared by the endpoint and ``tool-selector eval``.

``Ask`` -> the pattern read once (its gloss, its steps; a new pattern's second model starts
encoding it on the helper thread: ``arms.encode_early``) -> the catalog entry, found once
(``tool_vectors``: the catalog reused, or its tools decoded, deduplicated and built) -> the
arms' columns (``arms``: BM25, then the cosines of the first dense arm that can answer -
multilingual, the ensemble, the static table, its leaders re-read by the models - then the
learned column and the steps) -> the caller's controls
(``controls``) -> fusion and the rules of a good answer (``ranking.ranker.rank``: named
tools, the relevance bar, the budget) -> the ranked names, with what ranked them
(``Outcome.provenance``). Synchronous and framework-free: the HTTP layer runs it in a worker
thread. Where each room's parts live and why: docs/architecture.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import cached_property

from tool_selector.embeddings.cache import EmbeddingCache, NullCache
from tool_selector.embeddings.encoder import Encoder, Ensemble
from tool_selector.learning.learner import Learner
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.arms import arm_table, encode_early, read_columns
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore, Found
from tool_selector.pipeline.columns import (
    Arm,
    ArmRequest,
    Columns,
    Provenance,
    RankingPath,
    Rescue,
    Sources,
    read_pattern,
    timed,
)
from tool_selector.pipeline.controls import controls_of
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.learned import search_reading
from tool_selector.pipeline.query_vectors import QueryVectors
from tool_selector.pipeline.shortlist import ShortlistArm
from tool_selector.pipeline.step_vectors import QueryCache
from tool_selector.pipeline.tool_vectors import DEFAULT_BATCH, Shortlist, ToolVectors
from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import Rules
from tool_selector.ranking.glossary import Glossary
from tool_selector.ranking.language import may_be_foreign
from tool_selector.ranking.learned import tool_identity
from tool_selector.ranking.ranker import Controls, Ranking, rank
from tool_selector_client.wire import SearchRequest, Tool


@dataclass(frozen=True, slots=True)
class Outcome:
    """A ranking plus what it took to make it (for metrics and logs). ``removed``: how many
    tools each of the caller's controls left out (``Removed``'s fields; empty: none sent).
    ``provenance``: the arm and encoders that ranked it, and whether they had the whole
    catalog's vectors. ``rescue``: what a rescue of a static "no match" did (``Rescue``;
    ``None``: none was asked)."""

    ranking: Ranking
    path: RankingPath
    tools: int
    duplicates: int
    unknown_always_keep: int
    cache_hits: int = 0
    cache_misses: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    catalog_reused: bool = False
    query_cached: bool = False
    deferred: bool = False
    catalog: Catalog | None = None
    removed: dict[str, int] = field(default_factory=dict)
    #: The key the catalog is stored under (logged: ``POST /v1/catalog/lint`` takes it).
    catalog_key: str = ""
    provenance: Provenance = field(default_factory=Provenance)
    rescue: Rescue | None = None


class Selector:
    """Ranks a request's tools. Thread-safe; the encoders may be attached after construction
    (``encoder``, ``static``, ``multilingual``: each arm reads them when it is asked).

    ``encoder``: the model, or an ``Ensemble`` of models whose cosines are averaged.
    ``embed_deadline`` (seconds) bounds the embedding work one request may wait for: when the
    catalog's missing tool embeddings are predicted to take longer, the request is answered
    from the static arm (``static``, when set) or lexically, and the embedding finishes in the
    background (``Outcome.deferred``). ``multilingual`` (an ``Encoder`` of many languages):
    read for non-English patterns once its tool vectors are at hand; ``glossary``: the English
    words of their gloss. ``rules``: every constant it ranks with (``ranking.fitted``).
    ``learning``: the learner whose scopes' feedback the learned arm reads (none: off).
    ``shortlist``: the deadline and cache of the shortlist arm's vectors (``Shortlist``;
    none: ``embed_deadline`` and ``cache``, as the endpoint has them).
    """

    def __init__(
        self,
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        rules: Rules | None = None,
        *,
        catalogs: CatalogStore | None = None,
        queries: QueryCache | None = None,
        jobs: EmbeddingJobs | None = None,
        embed_deadline: float = 0.06,
        batch_size: int = DEFAULT_BATCH,
        static: Encoder | None = None,
        multilingual: Encoder | None = None,
        glossary: Glossary | None = None,
        learning: Learner | None = None,
        shortlist: Shortlist | None = None,
    ) -> None:
        self.rules = Rules() if rules is None else rules
        self.glossary, self.static, self.multilingual = glossary, static, multilingual
        self._encoder: Encoder | None = None
        self.encoders: Ensemble | None = None
        self.encoder = encoder
        # ``is None``, not ``or``: an empty cache has len() 0 and would read as falsy
        self.cache: EmbeddingCache = NullCache() if cache is None else cache
        self.catalogs = CatalogStore(0) if catalogs is None else catalogs
        self.jobs = EmbeddingJobs() if jobs is None else jobs
        self.queries: QueryCache = BoundedLRU(0) if queries is None else queries
        self.vectors = ToolVectors(
            self.cache,
            self.catalogs,
            self.jobs,
            self.rules.fields,
            embed_deadline=embed_deadline,
            batch_size=batch_size,
            shortlist=shortlist,
        )
        self.query_vectors = QueryVectors(self.queries, self.vectors.helper)  # one helper
        self.learning = learning
        self.sources = Sources(self, self.vectors, self.query_vectors, self.rules)
        self.arms: tuple[Arm, ...] = arm_table(self.sources)

    def select(self, request: Ask | SearchRequest) -> Outcome:
        """Rank the request's tools per SPEC.md rules 1-5 (a ``SearchRequest`` as ``Ask.of`` it)."""
        ask = request if isinstance(request, Ask) else Ask.of(request)
        timings = dict[str, float]()
        with timed(timings, "lexical"):
            gloss = self.multilingual is not None
            pattern = read_pattern(ask.pattern, self.rules, self.glossary, gloss)
        ahead = encode_early(self.sources, pattern)  # its second model, while we look up
        with timed(timings, "catalog"):
            found = self.entry(ask.tools)
        at_hand = time.perf_counter()  # the embedding deadline counts from here (ArmRequest)
        asked = ArmRequest(found, pattern, at_hand, timings, ask.scope, ahead, ask.filters)
        first, then = self._at_the_rescue
        given = read_columns(first, asked, self.rules.hybrid)
        columns = read_columns(then, asked, self.rules.hybrid, given)
        ranking, filtered = self._ranked(ask, asked, columns)
        rescue: Rescue | None = None
        if ranking.no_match and columns.unread and self.vectors.shortlist.rescue > 0:
            rescued = read_columns(then, replace(asked, rescue=True), self.rules.hybrid, given)
            if rescued.provenance.arm == "shortlist":  # the models' word before "no match"
                columns, rescue = rescued, "read"
                ranking, filtered = self._ranked(ask, asked, columns)
            else:  # the static answer stands
                rescue = "declined"
        removed = {**filtered, **ranking.removed}
        return _outcome(
            ask, found, columns, ranking, removed=removed, timings=timings, rescue=rescue
        )

    def _ranked(
        self, ask: Ask, asked: ArmRequest, columns: Columns
    ) -> tuple[Ranking, dict[str, int]]:
        """The ranking of ``columns`` and what the caller's controls left out."""
        with timed(asked.timings, "fuse"):
            pattern, entry = asked.pattern, asked.found.entry
            context = self.rules.context
            controls, filtered = controls_of(ask, entry, columns, self.query_vectors, context)
            foreign = pattern.foreign or may_be_foreign(pattern.text)
            ranking = _rank(ask, entry.catalog, columns, controls, foreign=foreign)
        return ranking, filtered

    @cached_property
    def _at_the_rescue(self) -> tuple[tuple[Arm, ...], tuple[Arm, ...]]:
        """The arms before the shortlist and those from it on. A static answer that says "no
        match" on the static tables' evidence alone, its leaders unread past the deadline
        (``Columns.unread``), is read again from the shortlist on (a rescue,
        ``ArmRequest.rescue``), so that an empty answer, the costliest to a real need
        (SPEC.md rule 4), rests on the models' cosines of the leaders, as a warm catalog's
        does; the arms before it are read once."""
        shortlist = (i for i, arm in enumerate(self.arms) if isinstance(arm, ShortlistArm))
        at = next(shortlist, len(self.arms))
        return self.arms[:at], self.arms[at:]

    @property
    def encoder(self) -> Encoder | None:
        """The model of the dense arm, or an ``Ensemble`` of models (``None``: lexical)."""
        return self._encoder

    @encoder.setter
    def encoder(self, encoder: Encoder | None) -> None:
        self._encoder = encoder
        self.encoders = None if encoder is None else Ensemble.of(encoder)

    def remember(self, search_id: str, ask: Ask, outcome: Outcome, caller: str) -> None:
        """Keep what search ``search_id`` showed, for its feedback (``learning``): nothing
        with learning off or without a scope; while no model is loaded, that it was answered
        so (its pattern has no vector to learn with: its feedback is told why it is not
        kept)."""
        learner, encoders, catalog = self.learning, self.encoders, outcome.catalog
        if learner is None or ask.scope is None or catalog is None:
            return
        reading = (
            None
            if encoders is None
            else search_reading(
                self.query_vectors, encoders.primary, ask.pattern, learner.terms_key
            )
        )
        texts = [catalog.texts[catalog.positions[name]] for name in outcome.ranking.names]
        tools = [(tool_identity(t.name, t.description), t.name) for t in texts]
        learner.remember(search_id, ask.scope, caller, reading, tools)

    def entry(self, tools: ToolSource) -> Found:
        """The catalog store's entry for ``tools``, found (or built) as ``select`` finds it
        (``tool-selector lint`` reads the built catalog and its matrices from it)."""
        return self.vectors.entry(tools, self.encoders)

    def warm(self, tools: list[Tool]) -> int:
        """Build and fully embed one tool catalog now, in this thread (start-up warm-up);
        how many tool texts had to be encoded (the rest came from the caches)."""
        return self.vectors.warm(tools, self.encoders)

    def embedded(self, tools: list[Tool]) -> tuple[Catalog, FloatArray | None]:
        """The catalog of ``tools`` and its embedding matrix, embedding it now if it must:
        the entry ``select`` answers from, so callers that need the texts or the vectors
        (``tool-selector eval``'s reference rankers) never derive them a second time."""
        return self.vectors.embedded(tools, self.encoders)


def _rank(
    ask: Ask, catalog: Catalog, columns: Columns, controls: Controls, *, foreign: bool
) -> Ranking:
    """``ranking.ranker.rank`` over the arms' columns (a pattern that may be foreign,
    ``language.may_be_foreign``, is never abstained on: the bar's floors are English
    evidence)."""
    return rank(
        catalog,
        columns.query,
        bm25=columns.bm25,
        dense=columns.dense,
        top_k=ask.top_k,
        always_keep=ask.always_keep,
        params=columns.params,
        controls=controls,
        clauses=columns.clauses,
        abstain=not foreign,
        bar_dense=None if columns.cosines is None else columns.cosines.bar,
        learned=columns.learned,
        read_ahead=columns.read_ahead,
    )


def _outcome(
    ask: Ask,
    found: Found,
    columns: Columns,
    ranking: Ranking,
    *,
    removed: dict[str, int],
    timings: dict[str, float],
    rescue: Rescue | None = None,
) -> Outcome:
    catalog = found.entry.catalog
    return Outcome(
        ranking=ranking,
        path=columns.path,
        tools=len(catalog),
        duplicates=found.duplicates,
        unknown_always_keep=sum(1 for n in set(ask.always_keep) if n not in catalog.positions),
        cache_hits=columns.tools.hits,
        cache_misses=columns.tools.misses,
        timings=timings,
        catalog_reused=found.reused,
        query_cached=columns.cosines is not None and columns.cosines.query_cached,
        deferred=columns.tools.deferred,
        catalog=catalog,
        removed=removed,
        catalog_key=found.key,
        provenance=columns.provenance,
        rescue=rescue,
    )
