"""A new pattern's second model starts encoding before the catalog is looked up (issue W).

``QueryVectors.early`` (``arms.encode_early``, called by ``Selector.select`` as soon as the
pattern is read) puts the models after the first on the helper thread, so the raw bytes'
hash, the catalog lookup and BM25 run beside it; the dense arm then takes that vector
instead of encoding the pattern again. Fake encoders: what is asserted is the order of the
work, which thread did it, and that every vector and answer is the one ``one`` gives.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from tests.fakes import HashingEncoder, TranslatingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Ensemble, encode_query
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline import arms
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.query_vectors import QueryVectors
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking import ranker
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import HYBRID
from tool_selector.ranking.glossary import Glossary
from tool_selector_client.wire import SearchRequest, Tool

TOOLS = [
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="read_file", description="Read a file from the local disk"),
    Tool(name="get_weather", description="Current weather and forecast for a city"),
]
WAIT = 5.0


class Second(HashingEncoder):
    """The ensemble's second model: records which thread encoded which text, says when it
    starts (``started``), may hold a text until ``gate`` is set, and may fail on one."""

    model_id = "test/second-model"

    def __init__(self, held: str = "", fails: str = "") -> None:
        super().__init__()
        self.held, self.fails = held, fails
        self.started, self.gate = threading.Event(), threading.Event()
        self.seen: list[tuple[str, str]] = []

    def encode(self, texts: Sequence[str]) -> FloatArray:
        self.seen += [(t, threading.current_thread().name) for t in texts]
        self.started.set()
        if self.held in texts:
            assert self.gate.wait(WAIT)
        if self.fails in texts:
            raise RuntimeError("the second model failed")
        return super().encode(texts)


def selector(second: Second, **extra: object) -> Selector:
    both = Ensemble((HashingEncoder(), second))
    return Selector(
        encoder=both,
        cache=MemoryCache(1 << 20),
        queries=BoundedLRU(100),
        embed_deadline=math.inf,
        **extra,  # type: ignore[arg-type]
    )


def looked_up_after(second: Second, pattern: str, wait: float = WAIT) -> tuple[Ask, list[bool]]:
    """An ``Ask`` whose catalog name, when first asked for, waits until ``second`` has
    started (at most ``wait`` seconds), and the list that records whether it had."""

    def named() -> str | None:
        if not began:
            began.append(second.started.wait(wait))
        return None

    began: list[bool] = []
    return Ask(pattern, ToolSource(named, lambda: TOOLS)), began


def test_the_second_model_starts_before_the_catalog_is_looked_up() -> None:
    second = Second()
    ask, began = looked_up_after(second, "post to slack")
    outcome = selector(second).select(ask)
    assert began == [True]
    assert outcome.path == "hybrid"
    text, thread = second.seen[0]  # before the tools' texts: the catalog was not found yet
    assert (text, thread.startswith("query-encode")) == ("post to slack", True)


def test_each_model_reads_a_new_pattern_once_and_the_vector_is_its_own() -> None:
    second = Second()
    chosen = selector(second)
    first = chosen.select(SearchRequest(pattern="post to slack", tools=TOOLS))
    again = chosen.select(SearchRequest(pattern="post to slack", tools=TOOLS))
    assert [t for t, _ in second.seen].count("post to slack") == 1
    assert (first.ranking, first.provenance) == (again.ranking, again.provenance)
    both = chosen.encoders
    assert both is not None
    vec, cached = chosen.query_vectors.vector(both, "post to slack")
    assert cached
    np.testing.assert_allclose(vec, encode_query(both, ["post to slack"])[0], atol=1e-6)


def test_the_answer_is_the_one_without_the_early_start() -> None:
    early, late = selector(Second()), selector(Second())
    late.query_vectors.early = lambda *_a, **_k: {}  # type: ignore[method-assign]
    steps = "read the local file with the forecast, then post the weather to the Slack channel"
    for pattern in ("post to slack", "weather in Porto", "read the local file", steps):
        request = SearchRequest(pattern=pattern, tools=TOOLS)
        a, b = early.select(request), late.select(request)
        assert (a.ranking, a.path) == (b.ranking, b.path)


def test_the_first_models_work_runs_while_the_second_still_encodes() -> None:
    second = Second(held="post to slack")
    both = Ensemble((HashingEncoder(), second))
    vectors = QueryVectors(BoundedLRU(100))
    ahead = vectors.early(both, "post to slack")
    seen: list[tuple[FloatArray, bool]] = []

    def meanwhile(first: FloatArray) -> None:  # the second model is held: still encoding
        seen.append((first, second.gate.is_set()))
        second.gate.set()

    vec, cached = vectors.vector(both, "post to slack", ahead=ahead, meanwhile=meanwhile)
    assert len(seen) == 1
    assert not seen[0][1]  # read before the second model was let go
    own = encode_query(both.parts[0], ["post to slack"])[0]
    np.testing.assert_array_equal(seen[0][0], own)
    np.testing.assert_array_equal(
        vec, both.combine([own, encode_query(second, ["post to slack"])[0]])
    )
    assert not cached


@pytest.mark.parametrize("parts", [2, 3])
@pytest.mark.parametrize("windows", [(), (3,)])
def test_the_first_parts_vector_read_early_is_the_one_read_from_the_joined(
    parts: int, windows: tuple[int, ...]
) -> None:
    """``first_of`` (the bar read while the helper encodes) gives the same floats, bit for
    bit, as ``first`` of the joined vector: the answers cannot move by a rounding."""
    ensemble = Ensemble([HashingEncoder() for _ in range(parts)])
    shape = (*windows, HashingEncoder.dim)
    rng = np.random.default_rng(parts * 10 + len(windows))
    for _ in range(200):
        vectors = [rng.standard_normal(shape).astype(np.float32) for _ in range(parts)]
        joined = ensemble.first(ensemble.combine(vectors))
        np.testing.assert_array_equal(ensemble.first_of(vectors[0]), joined)


def test_nothing_starts_early_while_another_request_encodes() -> None:
    second = Second(held="first pattern")
    both = Ensemble((HashingEncoder(), second))
    vectors = QueryVectors(BoundedLRU(100))
    ahead = vectors.early(both, "first pattern")
    assert second.started.wait(WAIT)
    assert vectors.early(both, "second pattern") == {}  # the helper is busy: not queued
    done: list[FloatArray] = []
    reader = threading.Thread(target=lambda: done.append(vectors.vector(both, "second pattern")[0]))
    reader.start()
    reader.join(WAIT)
    second.gate.set()
    assert done, "the second pattern waited for the helper"
    assert second.seen[-1] == ("second pattern", reader.name)
    _, cached = vectors.vector(both, "first pattern", ahead=ahead)
    assert not cached  # taken from the helper, encoded once
    assert [t for t, _ in second.seen].count("first pattern") == 1
    assert ahead == {}  # taken: nothing is left behind


def test_the_helper_is_free_once_a_request_has_its_early_vector() -> None:
    both = Ensemble((HashingEncoder(), Second()))
    vectors = QueryVectors(BoundedLRU(100))
    for n in range(50):  # the helper settles before the request it wakes goes on
        ahead = vectors.early(both, f"pattern {n}")
        assert len(ahead) == 1
        vectors.vector(both, f"pattern {n}", ahead=ahead)


def test_an_early_vector_is_its_request_s_own() -> None:
    second = Second()
    both = Ensemble((HashingEncoder(), second))
    vectors = QueryVectors(BoundedLRU(100))
    ahead = vectors.early(both, "post to slack")
    next(iter(ahead.values())).result(WAIT)
    assert vectors.early(both, "post to slack") == {}  # cached now: nothing to start
    assert vectors.one(second, "post to slack")[1]  # another request: from the cache
    assert not vectors.one(second, "post to slack", ahead=ahead)[1]  # the one it encoded
    assert [t for t, _ in second.seen] == ["post to slack"]


def test_a_vector_the_caller_cached_whole_starts_nothing() -> None:
    second = Second()
    both = Ensemble((HashingEncoder(), second))
    cache: BoundedLRU[tuple[str, str], FloatArray] = BoundedLRU(100)
    cache.put((both.model_id, "lint probe"), encode_query(both, ["lint probe"])[0])
    second.seen.clear()
    assert QueryVectors(cache).early(both, "lint probe") == {}
    assert second.seen == []


def test_nothing_starts_early_while_a_catalog_is_embedded() -> None:
    second = Second()
    chosen = selector(second)
    job, owner = chosen.jobs.claim("a catalog being embedded")
    assert owner
    job.background = True
    ask, began = looked_up_after(second, "post to slack", wait=0.5)
    chosen.select(ask)
    assert began == [False]  # the catalog was looked up before the second model started


def test_a_failure_on_the_helper_reaches_the_request_and_the_next_starts_early() -> None:
    second = Second(fails="boom")
    chosen = selector(second)
    with pytest.raises(RuntimeError, match="second model failed"):
        chosen.select(SearchRequest(pattern="boom", tools=TOOLS))
    second.started.clear()
    ask, began = looked_up_after(second, "post to slack")
    chosen.select(ask)
    assert began == [True]


def test_a_pattern_the_multilingual_arm_answers_starts_nothing() -> None:
    second = Second()
    chosen = selector(
        second,
        multilingual=TranslatingEncoder({}),
        glossary=Glossary.of([("message", ["nachricht"])]),
    )
    outcome = chosen.select(SearchRequest(pattern="Schick eine Nachricht an Slack", tools=TOOLS))
    assert outcome.provenance.arm == "multilingual"
    assert second.seen == []


def test_the_bar_read_while_the_second_model_encodes_is_the_one_read_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dense arm's relevance bar (``_first_cosines``) is the same array, bit for bit,
    whether it is read from the first model's vector while the helper encodes or from the
    joined vector after it (``meanwhile`` off): new patterns, long ones and a repeated one."""
    bars: dict[str, list[FloatArray | None]] = {"meanwhile": [], "after": []}
    shipped_vector, shipped_bar = QueryVectors.vector, arms._first_cosines
    way = ["meanwhile"]

    def vector(self: QueryVectors, *args: object, **kwargs: object) -> tuple[FloatArray, bool]:
        if way[0] == "after":
            args, kwargs = args[:4], {**kwargs, "meanwhile": None}
        return shipped_vector(self, *args, **kwargs)  # type: ignore[arg-type]

    def bar(*args: Any) -> FloatArray | None:
        got = shipped_bar(*args)
        bars[way[0]].append(got)
        return got

    monkeypatch.setattr(QueryVectors, "vector", vector)
    monkeypatch.setattr(arms, "_first_cosines", bar)
    steps = "read the local file with the forecast, then post the weather to the Slack channel"
    patterns = ["post to slack", "weather in Porto", " ".join(["forecast for the city"] * 40)]
    for name in bars:
        way[0], chosen = name, selector(Second())
        for pattern in [*patterns, steps, "post to slack"]:
            chosen.select(SearchRequest(pattern=pattern, tools=TOOLS))
    assert len(bars["meanwhile"]) == len(bars["after"]) == 5
    for early, late in zip(bars["meanwhile"], bars["after"], strict=True):
        assert early is not None
        assert late is not None
        np.testing.assert_array_equal(early, late)


def test_the_words_read_while_the_second_model_encodes_give_the_answer_read_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the ranking reads of the pattern's words (``ranker.read_lexical``: its signals,
    the lexical half of the fused score, the tools it names) is read while the helper
    encodes and taken by ``rank``; the answers, scores and all, are the ones read after
    (``meanwhile`` off): new patterns, a named tool, a typo, steps, a repeated one."""
    shipped_vector, shipped_fits = QueryVectors.vector, ranker.LexicalReading.fits
    way, taken = ["meanwhile"], list[bool]()

    def vector(self: QueryVectors, *args: object, **kwargs: object) -> tuple[FloatArray, bool]:
        if way[0] == "after":
            args, kwargs = args[:4], {**kwargs, "meanwhile": None}
        return shipped_vector(self, *args, **kwargs)  # type: ignore[arg-type]

    def fits(self: ranker.LexicalReading, *args: Any) -> bool:
        taken.append(shipped_fits(self, *args))
        return taken[-1]

    monkeypatch.setattr(QueryVectors, "vector", vector)
    monkeypatch.setattr(ranker.LexicalReading, "fits", fits)
    steps = "read the local file with the forecast, then post the weather to the Slack channel"
    patterns = ["post to slack", "send_message", "get_wether", "weather in Porto", steps]
    answers: dict[str, list[Any]] = {"meanwhile": [], "after": []}
    for name, got in answers.items():
        way[0], chosen = name, selector(Second())
        for pattern in [*patterns, "post to slack"]:
            outcome = chosen.select(SearchRequest(pattern=pattern, tools=TOOLS, top_k=2))
            got.append((outcome.ranking, outcome.path))
    assert len(taken) >= len(patterns)  # each new pattern's reading offered, and
    assert all(taken)  # taken (with ``meanwhile`` off none is made)
    assert answers["meanwhile"] == answers["after"]


def test_a_reading_of_other_words_or_params_is_not_taken() -> None:
    """``rank`` takes a ``LexicalReading`` only of its very catalog, query, BM25 array and
    params, and only with cosines; any other is read again, and the answer is the one
    without it."""
    chosen = selector(Second())
    chosen.select(SearchRequest(pattern="warm", tools=TOOLS))
    catalog = chosen.embedded(TOOLS)[0]
    params = replace(HYBRID, name_weight=HYBRID.name_weight + 1)
    query, other = ranker.Query.parse("post to slack"), ranker.Query.parse("read the file")
    bm25 = catalog.index.scores(query.terms)
    dense = np.linspace(0.1, 0.5, len(catalog), dtype=np.float32)
    base = {"bm25": bm25, "dense": dense, "top_k": 3, "always_keep": ()}
    plain = ranker.rank(catalog, query, params=params, **base)  # type: ignore[arg-type]
    readings = [
        ranker.read_lexical(catalog, other, bm25, params),
        ranker.read_lexical(catalog, query, bm25, HYBRID),
        ranker.read_lexical(catalog, query, bm25.copy(), params),
    ]
    assert not any(r.fits(catalog, query, bm25, params) for r in readings)
    same = ranker.read_lexical(catalog, query, bm25, params)
    assert same.fits(catalog, query, bm25, params)
    elsewhere = chosen.embedded([*TOOLS[:2], Tool(name="get_weather", description="Rain")])[0]
    readings.append(ranker.read_lexical(elsewhere, query, bm25, params))
    assert not readings[-1].fits(catalog, query, bm25, params)
    words = {"bm25": bm25, "top_k": 3, "always_keep": ()}
    lexical = ranker.rank(catalog, query, dense=None, params=params, **words)  # type: ignore[arg-type]
    offered = ranker.rank(catalog, query, dense=None, params=params, read_ahead=same, **words)  # type: ignore[arg-type]
    assert offered == lexical  # no cosines: the reading (no sub-word stand-in) is not taken
    for reading in [*readings, same]:
        got = ranker.rank(catalog, query, params=params, read_ahead=reading, **base)  # type: ignore[arg-type]
        assert got == plain


class _Counting:
    """A ``Helper`` stand-in that counts ``enter`` calls and hands out no thread."""

    def __init__(self) -> None:
        self.entered = 0

    def enter(self) -> None:
        self.entered += 1

    def take(self) -> None:
        return None

    def leave(self) -> None:
        pass


@pytest.mark.parametrize("clauses", [(), ((0, 7), (12, 25))])
def test_a_pattern_every_model_has_read_is_read_here_without_the_helper(
    clauses: tuple[tuple[int, int], ...],
) -> None:
    """A repeated pattern's later parts come from the cache in the request's own thread: no
    hand-over to the helper (a thread hop per answer), the same vector and ``cached``."""
    second = Second()
    both = Ensemble((HashingEncoder(), second))
    vectors = QueryVectors(BoundedLRU(100))
    pattern = "post to slack and read a file"
    first, cached = vectors.vector(both, pattern, clauses)
    assert not cached
    counting = _Counting()
    vectors.helper = counting  # type: ignore[assignment]
    seen: list[FloatArray] = []
    again, cached = vectors.vector(both, pattern, clauses, meanwhile=seen.append)
    assert cached
    assert counting.entered == 0
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(seen[0], vectors.one(both.parts[0], pattern)[0])
    assert [t for t, _ in second.seen] == [pattern]  # read once
    vectors.vector(both, "a new pattern")  # one the cache lacks goes through the helper
    assert counting.entered == 1
