"""``EmbeddingJobs``' prediction of an encode: each model's own rate, per character of the
texts it will read."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Ensemble
from tool_selector.pipeline import calibration
from tool_selector.pipeline.jobs import MAX_CHARS, SECONDS_PER_CHAR, EmbeddingJobs, text_chars
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.dense import FloatArray
from tool_selector_client.wire import SearchRequest, Tool


def test_before_any_measure_the_default_rate_counts_characters() -> None:
    jobs = EmbeddingJobs()
    assert jobs.estimate("m", ["a" * 100]) == pytest.approx(100 * SECONDS_PER_CHAR)
    assert jobs.estimate("m", ["a" * 100, "b" * 400]) == pytest.approx(500 * SECONDS_PER_CHAR)
    assert jobs.estimate("m", []) == 0.0


def test_each_model_has_its_own_rate() -> None:
    jobs = EmbeddingJobs(seconds_per_char=1e-4)
    texts = ["x" * 100] * 10  # 1,000 characters
    jobs.observe("slow", texts, 0.5)  # 5e-4 s a character
    jobs.observe("fast", texts, 0.05)  # 5e-5
    assert jobs.estimate("slow", ["y" * 200]) == pytest.approx(0.1)
    assert jobs.estimate("fast", ["y" * 200]) == pytest.approx(0.01)
    assert jobs.estimate("other", ["y" * 200]) == pytest.approx(0.02)  # its default


def test_a_long_text_costs_more_than_a_short_one() -> None:
    """What a count of texts missed: ten leaders of 500 characters are predicted five times
    the cost of ten of 100, at the same measured rate."""
    jobs = EmbeddingJobs()
    jobs.observe("m", ["x" * 200] * 16, 0.32)  # 1e-4 s a character
    assert jobs.estimate("m", ["y" * 500] * 10) == pytest.approx(
        5 * jobs.estimate("m", ["y" * 100] * 10)
    )


def test_small_batches_and_empty_texts_do_not_move_the_rate() -> None:
    jobs = EmbeddingJobs()
    before = jobs.estimate("m", ["a" * 100])
    jobs.observe("m", ["x" * 100] * 7, 10.0)
    jobs.observe("m", [""] * 16, 10.0)
    assert jobs.estimate("m", ["a" * 100]) == before


def test_the_first_measure_is_the_rate_and_later_ones_move_it() -> None:
    jobs = EmbeddingJobs(seconds_per_char=1e-4)
    jobs.observe("m", ["x" * 100] * 10, 2.0)  # 2e-3 s a character
    assert jobs.estimate("m", ["a" * 1000]) == pytest.approx(2.0)
    jobs.observe("m", ["x" * 100] * 10, 1.0)  # 1e-3
    assert jobs.estimate("m", ["a" * 1000]) == pytest.approx(1.7)


def test_a_text_counts_no_more_than_the_models_read() -> None:
    assert text_chars(["a" * (MAX_CHARS * 5), "bb"]) == MAX_CHARS + 2
    assert text_chars(["a" * 10, "bb"]) == 12
    jobs = EmbeddingJobs(seconds_per_char=1e-3)
    assert jobs.estimate("m", ["a" * (MAX_CHARS * 5)]) == pytest.approx(MAX_CHARS * 1e-3)
    jobs.observe("m", ["a" * (MAX_CHARS * 5)] * 8, 8 * MAX_CHARS * 1e-4)
    assert jobs.estimate("m", ["b" * 100]) == pytest.approx(100 * 1e-4)


def test_no_time_is_no_measure() -> None:
    """A clock that did not move would make every later encode predicted free, and a free
    encode fits any deadline."""
    jobs = EmbeddingJobs()
    jobs.observe("m", ["x" * 100] * 8, 0.0)
    assert jobs.estimate("m", ["a" * 100]) == pytest.approx(100 * SECONDS_PER_CHAR)


def _tools(description: str) -> list[Tool]:
    return [Tool(name=f"tool_{i}", description=f"{description} {i}") for i in range(3)]


def _first_path(tools: list[Tool]) -> str:
    """The first answer's path over a new catalog: the model's rate 1 ms a character, the
    embedding deadline 0.5 s."""
    jobs = EmbeddingJobs(seconds_per_char=1e-3)
    selector = Selector(
        encoder=HashingEncoder(), cache=MemoryCache(1 << 20), jobs=jobs, embed_deadline=0.5
    )
    try:
        return selector.select(SearchRequest(pattern="slack message", tools=tools)).path
    finally:
        jobs.close()


def test_a_catalog_is_embedded_inline_by_its_length_not_its_count() -> None:
    """Three tools of short texts (about 0.15 s predicted) are embedded by the request;
    three of long ones (about 3 s) go to the background, the answer lexical meanwhile."""
    assert _first_path(_tools("Post a message to a Slack channel")) == "hybrid"
    assert _first_path(_tools("Post a message to a Slack channel. " * 30)) == "lexical"


class Timed(HashingEncoder):
    """Records each call's texts; each takes ``seconds`` a character (``time.sleep``)."""

    def __init__(self, model_id: str, seconds: float) -> None:
        super().__init__()
        self.model_id, self.seconds = model_id, seconds
        self.texts_seen: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> FloatArray:
        self.texts_seen.append(list(texts))
        time.sleep(self.seconds * sum(map(len, texts)))
        return self._vectors(texts)


def test_calibration_sets_each_models_rate_from_its_own_texts() -> None:
    """``ToolVectors.calibrate``: each model warms on the first two texts of the built-in
    tools, then both nines are timed (calls under 16 texts: the session a request's own
    encodes run on) and set its rate; nothing is stored, cached or queued."""
    first, second = Timed("first", 2e-5), Timed("second", 1e-4)
    cache = MemoryCache(1 << 20)
    selector = Selector(encoder=Ensemble((first, second)), cache=cache)
    selector.vectors.calibrate(Ensemble((first, second)), calibration.TOOLS)
    for part in (first, second):
        assert [len(c) for c in part.texts_seen] == [2, 9, 9]
        assert part.texts_seen[1][:2] == part.texts_seen[0]
    assert first.texts_seen[1][0].endswith(
        "Parameters: repo The repo. title The title. body The body."
    )
    assert "Parameters" not in " ".join(second.texts_seen[1])  # bge-small's text: no parameters
    chars = [text_chars(p.texts_seen[1] + p.texts_seen[2]) for p in (first, second)]
    assert 2_000 < chars[1] < chars[0] < 5_000  # our sets' lengths
    rates = [selector.jobs.rate(p.model_id) for p in (first, second)]
    assert rates[0] >= 2e-5  # each slept at least that long
    assert rates[1] >= 1e-4
    assert SECONDS_PER_CHAR not in rates  # measured, not the default
    assert (len(cache), len(selector.catalogs), selector.jobs.depth) == (0, 0, 0)
