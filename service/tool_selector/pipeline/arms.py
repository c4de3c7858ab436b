"""The arms of the ranking, as a table: each adds its signal columns through one protocol.

A request's pattern is read once (``ReadPattern``: as sent, its English gloss when it reads
as not English, its steps when it is a multi-step English task). Then every arm of the table
in turn reads the request and the columns the arms before it gave, and returns them with its
own added (``Arm.read``):

- ``LexicalArm``: the pattern's terms and their BM25 scores (always);
- ``MultilingualArm``: for a pattern that reads as not English, the multilingual model's
  cosines of the pattern as sent, blended with the English model's cosines of its gloss;
- ``DenseArm``: the ensemble's cosines once every part has the catalog's vectors, else its
  first model's alone while the others embed it (``partial``);
- ``StaticArm``: the static tables' cosines (each against its model's query vector) while
  no model has the catalog's vectors;
- ``ShortlistArm`` (``pipeline.shortlist``): the static arm's answer, its first tools re-read
  by the models themselves when the embedding deadline has room for their vectors;
- ``LearnedArm`` (``pipeline.learned``): what the scope's model called after near searches;
- ``StepsArm``: each step's BM25 scores and cosines (``ranking.steps``).

The values they exchange are in ``pipeline.columns``.

The first of the three dense arms that can answer does; the others leave the columns as they
are, but for the shortlist arm, which refines the static arm's answer. Which arm answered,
the encoders whose cosines ranked and whether they had the whole catalog's vectors travel
with the columns (``Provenance``): the search log and the answer's headers read that value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tool_selector.embeddings.encoder import Encoder, Ensemble
from tool_selector.embeddings.static import static_matrix, static_text
from tool_selector.pipeline.catalog_store import CatalogEntry
from tool_selector.pipeline.columns import (
    Arm,
    ArmRequest,
    Columns,
    Cosines,
    Embedded,
    Provenance,
    ReadPattern,
    Sources,
    timed,
)
from tool_selector.pipeline.learned import LearnedArm
from tool_selector.pipeline.query_vectors import Ahead
from tool_selector.pipeline.shortlist import ShortlistArm
from tool_selector.pipeline.step_vectors import clause_cosines
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.fitted import Rules
from tool_selector.ranking.fusion import FusionParams
from tool_selector.ranking.ranker import Clause, LexicalReading, Query, read_lexical


@dataclass(frozen=True, slots=True)
class LexicalArm:
    """The pattern's lexical query (``ReadPattern.query``) and its BM25 scores."""

    sources: Sources

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        with timed(request.timings, "lexical"):
            query = request.pattern.query()
            bm25 = request.found.entry.catalog.index.scores(query.terms)
        return replace(columns, query=query, bm25=bm25)


@dataclass(frozen=True, slots=True)
class MultilingualArm:
    """For a pattern that reads as not English, the multilingual model's cosines over its
    tool vectors (of ``static_text``) fused with ``Rules.foreign``, once those vectors are at
    hand (same deadline and jobs as the model's), blended with the English model's cosines
    of the gloss alone (``Rules.gloss_share`` of them) when its matrix is at hand."""

    sources: Sources

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        src, found = self.sources, request.found
        multilingual = src.models.multilingual
        if not request.pattern.foreign or multilingual is None or not len(found.entry.catalog):
            return columns
        with timed(request.timings, "multilingual"):
            found.entry.read_as(multilingual.model_id, static_text)
            own = Ensemble.of(multilingual)
            tools = src.tools.matrix(own, found, request.started)
            if tools.matrix is None:  # queued: the English arms answer, partial
                return replace(columns, awaited=True)
            qvec, cached = src.queries.one(multilingual, request.pattern.text)
            scores = cosine_scores(qvec, tools.matrix)
            scores, english = self._with_gloss(request, scores)
        wanted = english is not None or self._gloss_wanted(request)
        provenance = Provenance(
            "multilingual",
            (multilingual,) if english is None else (multilingual, english),
            "partial" if wanted and english is None else "complete",
        )
        answer = Cosines(
            scores, src.rules.foreign, "hybrid", tools.matrix, multilingual, provenance, cached
        )
        return replace(columns, cosines=answer, tools=tools)

    def _gloss_wanted(self, request: ArmRequest) -> bool:
        encoders = self.sources.models.encoders
        return bool(self.sources.rules.gloss_share and encoders and request.pattern.gloss)

    def _with_gloss(
        self, request: ArmRequest, scores: FloatArray
    ) -> tuple[FloatArray, Encoder | None]:
        """``scores`` blended with the first English model's cosines of the gloss, and that
        model; ``scores`` alone and none when there is no gloss or its matrix is not in."""
        src, share = self.sources, self.sources.rules.gloss_share
        encoders = src.models.encoders
        if not self._gloss_wanted(request) or encoders is None:
            return scores, None
        english = encoders.primary
        matrix = src.tools.matrix(Ensemble.of(english), request.found, request.started).matrix
        if matrix is None:
            return scores, None
        qvec, _ = src.queries.one(english, request.pattern.gloss)
        blend = cosine_scores(qvec, matrix)
        return np.asarray((1 - share) * scores + share * blend, dtype=np.float32), english


@dataclass(frozen=True, slots=True)
class DenseArm:
    """The ensemble's cosines (``hybrid``) once every part has the catalog's vectors (within
    the deadline, else queued); meanwhile its first model's alone when that one's are in
    (the answer the first model alone gives, not the static arm's). A mean's answer carries
    the first model's cosines for the relevance bar (its floors are that model's)."""

    sources: Sources

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        src, found = self.sources, request.found
        encoders = src.models.encoders
        if columns.cosines or encoders is None or not len(found.entry.catalog):
            return columns
        with timed(request.timings, "embed"):
            tools = src.tools.matrix(encoders, found, request.started)
            embedded: Embedded = "partial" if columns.awaited else "complete"
            if tools.matrix is None and encoders.several:
                first = found.entry.matrix(encoders.primary.model_id)
                if first is not None:
                    encoders, tools, embedded = (
                        Ensemble.of(encoders.primary),
                        replace(tools, matrix=first),
                        "partial",
                    )
            if tools.matrix is None:
                return replace(columns, tools=tools)
            (qvec, cached, bar), ahead = self._query(request, columns, encoders, tools.matrix)
            scores = cosine_scores(qvec, tools.matrix)
        made = Provenance("dense", encoders.parts, embedded)
        answer = Cosines(
            scores, src.rules.hybrid, "hybrid", tools.matrix, encoders, made, cached, bar
        )
        return replace(columns, cosines=answer, tools=tools, read_ahead=ahead)

    def _query(
        self, request: ArmRequest, columns: Columns, encoders: Ensemble, matrix: FloatArray
    ) -> tuple[tuple[FloatArray, bool, FloatArray | None], LexicalReading | None]:
        """The pattern's query vector, whether it was cached, and the relevance bar's
        cosines (``_first_cosines``); those, and what the ranking reads of the pattern's
        words (``read_lexical``), read from the first model's vector while the helper still
        encodes the others (``QueryVectors.vector``'s ``meanwhile``; none: not read ahead)."""
        entry, early = request.found.entry, list[tuple[FloatArray | None, LexicalReading]]()

        def meanwhile(first: FloatArray) -> None:
            bar = _first_cosines(encoders, encoders.first_of(first), encoders, entry, matrix)
            params = self.sources.rules.hybrid
            early.append((bar, read_lexical(entry.catalog, columns.query, columns.bm25, params)))

        spans = request.pattern.spans if _in_context(self.sources.rules) else ()
        words, ahead = request.pattern.words, request.ahead
        qvec, cached = self.sources.queries.vector(encoders, words, spans, ahead, meanwhile)
        if early:
            (bar, reading), *_ = early
            return (qvec, cached, bar), reading
        bar = _first_cosines(encoders, encoders.first(qvec), encoders, entry, matrix)
        return (qvec, cached, bar), None


def _first_cosines(
    models: Ensemble,
    first: FloatArray,
    tools: Ensemble,
    entry: CatalogEntry,
    joined: FloatArray,
) -> FloatArray | None:
    """The first model's cosines inside a mean's answer (the relevance bar's floors are its):
    ``first``, the first part of ``models``' query vector (``Ensemble.first``), against the
    first part of ``tools``' matrix (the models' own on the dense arm, the static tables on
    the cold path), the one kept on the entry when there is one (slicing the joined matrix
    copied 4,000 x 384 floats a request); ``None`` for a single model."""
    if not models.several:
        return None
    own = entry.matrix(tools.primary.model_id)
    return cosine_scores(first, tools.first(joined) if own is None else own)


@dataclass(frozen=True, slots=True)
class StaticArm:
    """Cosines from the static tables, fused with the cold path's rules, while no model has
    the catalog's vectors. Its matrix is built on first use (milliseconds) and kept on the
    entry; never cached by text (recomputing is as cheap as a lookup). Each table's rows are
    its model's own outputs, so each is read against that model's query vector
    (``Rules.cross``; ``paired``): with both tables and both models, the mean of the two
    cosines (the ``Ensemble`` of the tables against the models' joined query vector, the
    one the dense arm reads, from the same query cache), the relevance bar on MiniLM's
    half as on the dense arm; else MiniLM's table alone; with no model that shares a table's
    space, the first table's own query vector (``Rules.static``)."""

    sources: Sources

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        src, entry = self.sources, request.found.entry
        static = src.models.static
        if columns.cosines or static is None or not len(entry.catalog):
            return columns
        with timed(request.timings, "static"):
            tables, models = paired(Ensemble.of(static), src.models.encoders)
            matrix = entry.matrix(tables.model_id)
            if matrix is None:
                matrix = static_matrix(tables, entry.catalog.texts)
                entry.set_matrix(tables.model_id, matrix)
            if models is None:
                encoder, params = tables.primary, src.rules.static
                qvec, cached = src.queries.one(encoder, request.pattern.words)
            else:
                encoder, params = models, src.rules.cross
                qvec, cached = src.queries.vector(models, request.pattern.words, (), request.ahead)
            scores = cosine_scores(qvec, matrix)
            bar = (
                None
                if models is None
                else _first_cosines(models, models.first(qvec), tables, entry, matrix)
            )
        read_by = tables.parts + (() if models is None else models.parts)
        made = Provenance("static", read_by, "none")
        answer = Cosines(scores, params, "static", matrix, encoder, made, cached, bar)
        return replace(columns, cosines=answer)


def paired(tables: Ensemble, models: Ensemble | None) -> tuple[Ensemble, Ensemble | None]:
    """The static tables the arm reads and the models whose query vectors read them: each
    table with the model in the same place while their dimensions agree (MiniLM's table with
    MiniLM, bge-small's with bge-small); the first table alone and no model when the first
    model's dimension is not the table's (or no model is loaded): then the table's own query.
    """
    if models is None:
        return Ensemble.of(tables.primary), None
    n = 0
    for table, model in zip(tables.parts, models.parts, strict=False):
        if table.dim != model.dim:
            break
        n += 1
    if n == 0:
        return Ensemble.of(tables.primary), None
    if n == len(tables.parts) == len(models.parts):
        return tables, models
    return Ensemble(tables.parts[:n]), Ensemble(models.parts[:n])


@dataclass(frozen=True, slots=True)
class StepsArm:
    """The steps of a multi-step English pattern (``ReadPattern.steps``; none when the rule
    is off), each with its BM25 scores and, on a dense path, its cosines: of its own vector
    from the answering arm's query encoder (``StepRule.own_vectors``), the whole pattern's
    mixed with its own in the pattern's context (``StepRule.in_context``, on the hybrid
    path: ``step_vectors``), the whole pattern's alone (the in-context read unavailable), or
    none (``StepRule.words_only``)."""

    sources: Sources

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        rule, texts = self.sources.rules.steps, request.pattern.steps
        if rule is None or not texts:
            return columns
        with timed(request.timings, "steps"):
            index = request.found.entry.catalog.index
            queries = [Query.parse(t) for t in texts]
            cosines = self._cosines(request, columns)
            steps = tuple(
                Clause(q, index.scores(q.terms), cos, rule.reach)
                for q, cos in zip(queries, cosines, strict=True)
            )
        return replace(columns, clauses=steps)

    def _cosines(self, request: ArmRequest, columns: Columns) -> list[FloatArray | None]:
        src, texts = self.sources, request.pattern.steps
        rule = src.rules.steps
        if rule is None or rule.words_only:
            return [None] * len(texts)
        whole: list[FloatArray | None] = [columns.dense] * len(texts)
        if columns.cosines is None:
            return whole
        encoder, matrix, dense = (
            columns.cosines.encoder,
            columns.cosines.matrix,
            columns.cosines.scores,
        )
        if rule.own_vectors:
            return [cosine_scores(v, matrix) for v in src.queries.many(encoder, texts)]
        if columns.path != "hybrid" or not _in_context(src.rules):
            return whole
        spans = request.pattern.spans
        share = rule.context_share
        pattern = request.pattern.words
        read = clause_cosines(
            encoder, src.queries.cache, pattern, spans, (matrix, dense), share=share
        )
        return whole if read is None else list(read)


def _in_context(rules: Rules) -> bool:
    """Whether a multi-step pattern's clauses are read in its context (``in_context``, not
    ``own_vectors`` nor ``words_only``)."""
    rule = rules.steps
    return rule is not None and rule.in_context and not rule.own_vectors and not rule.words_only


def arm_table(sources: Sources) -> tuple[Arm, ...]:
    """The arms in the order they read: words, then the dense arms (the first that can
    answers; the shortlist refines the static arm's), then the learned column, then the
    steps, which read the answering arm's cosines."""
    return (
        LexicalArm(sources),
        MultilingualArm(sources),
        DenseArm(sources),
        StaticArm(sources),
        ShortlistArm(sources),
        LearnedArm(sources),
        StepsArm(sources),
    )


def encode_early(sources: Sources, pattern: ReadPattern) -> Ahead:
    """Start the query encode of the models after the first on the helper thread before the
    catalog is looked up (``QueryVectors.early``), with the words and clauses the dense arm
    reads, and give the request their futures; none for a pattern the multilingual arm may
    answer (the dense arm may not read it), nor while a catalog is being embedded in the
    background (no core is free: the embedding has it)."""
    encoders = sources.models.encoders
    if encoders is None or (pattern.foreign and sources.models.multilingual is not None):
        return {}
    if sources.tools.jobs.depth:
        return {}
    spans = pattern.spans if _in_context(sources.rules) else ()
    return sources.queries.early(encoders, pattern.words, spans)


def read_columns(
    arms: tuple[Arm, ...],
    request: ArmRequest,
    params: FusionParams,
    given: Columns | None = None,
) -> Columns:
    """Every arm's columns for ``request``, in table order (``params``: the fusion of an
    answer no dense arm gives), added to ``given`` (the columns of the arms before these)."""
    columns = Columns(Query("", ()), np.zeros(0, np.float32), params) if given is None else given
    for arm in arms:
        columns = arm.read(request, columns)
    return columns
