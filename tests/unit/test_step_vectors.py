"""A multi-step pattern's clauses read in the pattern's context (``pipeline.step_vectors``,
``StepRule.in_context``): one pass gives the pattern's vector and its clauses', cached; a
clause's cosines are the mean of its own and the whole pattern's; where the clauses cannot
be read so (an encoder without ``encode_spans``, a pattern read in windows), none."""

from __future__ import annotations

import math

import numpy as np

from tests.fakes import HashingEncoder, SpanHashingEncoder
from tests.unit.test_steps import TASK, TOOLS
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Ensemble
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.step_vectors import (
    QueryCache,
    clause_cosines,
    read_spans,
    steps_key,
    wants_spans,
)
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.ranking.steps import clauses, locate
from tool_selector_client.wire import SearchRequest

PATTERN = "send the report to the team. then read the weather for Paris"
SPANS = ((0, 27), (34, 61))
MATRIX = HashingEncoder().encode(["send report team", "read weather paris", "create issue"])

SHARE = SHIPPED_STEPS.context_share


def whole_cosines(encoder: HashingEncoder) -> FloatArray:
    return np.asarray(MATRIX @ encoder.encode([PATTERN])[0], dtype=np.float32)


def test_locate_finds_each_clause_in_order() -> None:
    pattern = "Open the file. Then open the file again; finally close the file"
    steps = clauses(pattern)
    assert steps == ("Open the file.", "open the file again", "close the file")
    assert [pattern[lo:hi] for lo, hi in locate(pattern, steps)] == list(steps)
    assert locate(pattern, ("not in it",)) == ((0, 0),)


def test_a_clauses_cosines_are_the_mean_of_its_own_and_the_wholes() -> None:
    encoder, queries = SpanHashingEncoder(), BoundedLRU[tuple[str, str], FloatArray](10)
    whole = whole_cosines(encoder)
    got = clause_cosines(encoder, queries, PATTERN, SPANS, (MATRIX, whole), share=SHARE)
    assert got is not None
    assert len(got) == 2
    own = HashingEncoder().encode([PATTERN[lo:hi] for lo, hi in SPANS])
    for i in range(2):
        expected = SHARE * (MATRIX @ own[i]) + (1 - SHARE) * whole
        np.testing.assert_allclose(got[i], expected, atol=1e-6)
    assert int(np.argmax(got[1])) == 1  # the weather clause leans to the weather tool


def test_the_pass_that_reads_the_pattern_caches_its_clauses() -> None:
    encoder, queries = SpanHashingEncoder(), BoundedLRU[tuple[str, str], FloatArray](10)
    assert wants_spans(encoder, queries, PATTERN, SPANS)
    vec = read_spans(encoder, queries, PATTERN, SPANS)
    np.testing.assert_allclose(vec, HashingEncoder().encode([PATTERN])[0])
    assert not wants_spans(encoder, queries, PATTERN, SPANS)
    clause_cosines(encoder, queries, PATTERN, SPANS, (MATRIX, whole_cosines(encoder)), share=SHARE)
    assert encoder.passes == 1


def test_a_mean_encoders_clauses_join_its_parts() -> None:
    one, two = SpanHashingEncoder(), SpanHashingEncoder()
    two.model_id = "test/second"
    both, queries = Ensemble([one, two]), BoundedLRU[tuple[str, str], FloatArray](10)
    matrix = np.concatenate([MATRIX, MATRIX], axis=1) / np.float32(math.sqrt(2))
    got = clause_cosines(both, queries, PATTERN, SPANS, (matrix, whole_cosines(one)), share=SHARE)
    solo = SpanHashingEncoder()
    alone = clause_cosines(
        solo, BoundedLRU(10), PATTERN, SPANS, (MATRIX, whole_cosines(solo)), share=SHARE
    )
    assert got is not None
    assert alone is not None
    np.testing.assert_allclose(got, alone, atol=1e-6)  # the same model twice: its own
    assert (one.passes, two.passes) == (1, 1)
    assert queries.get(steps_key(two.model_id, PATTERN)) is not None


def test_none_where_the_clauses_cannot_be_read_in_context() -> None:
    queries: QueryCache = BoundedLRU(10)
    plain = HashingEncoder()
    assert (
        clause_cosines(plain, queries, PATTERN, SPANS, (MATRIX, whole_cosines(plain)), share=SHARE)
        is None
    )
    long = PATTERN + ". " + "more words here. " * 70  # read in windows
    span = SpanHashingEncoder()
    assert not wants_spans(span, queries, long, SPANS)
    assert (
        clause_cosines(span, queries, long, SPANS, (MATRIX, whole_cosines(span)), share=SHARE)
        is None
    )
    assert span.passes == 0


def answer(encoder: HashingEncoder, queries: QueryCache, top_k: int = 3) -> list[str]:
    selector = Selector(
        encoder=encoder,
        cache=MemoryCache(1 << 20),
        queries=queries,
        embed_deadline=math.inf,
        rules=Rules(steps=SHIPPED_STEPS),
    )
    return selector.select(SearchRequest(pattern=TASK, tools=TOOLS, top_k=top_k)).ranking.names


def test_the_shipped_rule_reads_a_long_task_in_one_pass() -> None:
    """The tools are encoded, then the task once: its vector and its clauses' together; a
    repeat reads both from the cache."""
    encoder, queries = SpanHashingEncoder(), BoundedLRU[tuple[str, str], FloatArray](100)
    first = answer(encoder, queries)
    assert (encoder.calls, encoder.passes) == ([8], 1)
    assert answer(encoder, queries) == first
    assert (encoder.calls, encoder.passes) == ([8, 8], 1)  # a new selector embeds the tools
    assert "warehouse_space" in first


def test_the_answer_does_not_depend_on_the_query_cache() -> None:
    """With no query cache, the clauses are read again when ranked: the same answer."""
    uncached = SpanHashingEncoder()
    assert answer(uncached, BoundedLRU(0)) == answer(SpanHashingEncoder(), BoundedLRU(100))
    assert uncached.passes == 2
