"""The shortlist arm (``pipeline.shortlist``): a new catalog's first answer re-read by the
models themselves for the static arm's leaders, within the embedding deadline."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import Any, get_args

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from tests.support import second_static_table, static_table
from tool_selector.embeddings.cache import MemoryCache, NullCache
from tool_selector.embeddings.encoder import Ensemble, encode_query
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.embeddings.models import BGE_SMALL
from tool_selector.embeddings.static import StaticEncoder
from tool_selector.http.wiring import build_selector
from tool_selector.metrics import RESCUE_RESULTS, Metrics
from tool_selector.pipeline import selector as selector_module
from tool_selector.pipeline import tool_vectors
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.columns import Rescue
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.shortlist import _mixed
from tool_selector.pipeline.tool_vectors import Shortlist
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import SHIPPED_STEPS, SHORTLIST, Rules
from tool_selector.settings import Settings
from tool_selector_client.wire import Filters, SearchRequest, Tool

TOOLS = [
    Tool(name=f"tool_{i}", description=f"Manage the {thing} of a project")
    for i, thing in enumerate(
        "issues labels milestones releases branches tags webhooks secrets runners artifacts "
        "deployments environments wikis pages".split()
    )
] + [
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="read_file", description="Read a file from the local disk"),
    Tool(name="get_weather", description="Current weather and forecast for a city"),
]
pytestmark = pytest.mark.model

PATTERN = "post a note in the team's chat room"


@pytest.fixture(scope="module")
def both() -> Ensemble:
    encoder = encoder_from_settings(Settings())
    assert isinstance(encoder, Ensemble)
    return encoder


@pytest.fixture(scope="module")
def tables() -> Ensemble:
    first = StaticEncoder(static_table())
    return Ensemble([first, StaticEncoder(second_static_table(), BGE_SMALL.name)])


def cold(
    both: Ensemble,
    tables: Ensemble,
    deadline: float,
    cache: MemoryCache,
    rules: Rules | None = None,
    seconds_per_char: float | None = None,
    catalogs: NullCache | None = None,
    rescue: float = tool_vectors.RESCUE_SECONDS,
) -> Selector:
    """Answers every catalog from the static arm (no model ever embeds its catalogs), with
    ``deadline`` seconds for the shortlist's vectors, read from and kept in ``cache`` (the
    service keeps them apart: ``test_the_catalogs_matrix_is_its_own_batches``); the
    catalogs' cache is ``catalogs`` (none: an empty one)."""
    jobs = EmbeddingJobs() if seconds_per_char is None else EmbeddingJobs(1, seconds_per_char)
    jobs.close(0.0)
    return Selector(
        encoder=both,
        static=tables,
        jobs=jobs,
        cache=catalogs,
        embed_deadline=0.0,
        rules=rules or Rules(),
        shortlist=Shortlist(deadline, cache, cache, rescue=rescue),
    )


def test_the_leaders_are_ranked_by_the_models_own_cosines(both: Ensemble, tables: Ensemble) -> None:
    cache = MemoryCache(1 << 24)
    selector = cold(both, tables, math.inf, cache)
    outcome = selector.select(SearchRequest(pattern=PATTERN, tools=TOOLS))
    assert (outcome.path, outcome.provenance.arm) == ("static", "shortlist")
    assert outcome.provenance.encoders == (*tables.parts, *both.parts)  # the rest: the tables
    assert outcome.provenance.embedded == "partial"
    assert outcome.ranking.names[0] == "send_message"
    entry = selector.entry(ToolSource.of(TOOLS)).entry
    at = entry.catalog.positions["send_message"]
    exact = both.combine([p.encode([entry.texts(p.model_id)[at]]) for p in both.parts])[0]
    query = encode_query(both, [PATTERN])[0]
    # the vector the shortlist encoded in a batch of ten: int8 models' dynamic quantization
    # reads the batch, so its cosine is near, not equal to, this one encoded alone
    static = cold(both, tables, 0.0, MemoryCache(1 << 24)).select(
        SearchRequest(pattern=PATTERN, tools=TOOLS)
    )
    got, before = outcome.ranking.picked[0].dense_similarity, static.ranking.picked[0]
    assert before.name == "send_message"
    assert got == pytest.approx(exact @ query, abs=0.01)
    assert abs(before.dense_similarity - got) > 0.05
    # the shortlist's vectors are kept under each model's id: the next request finds them
    assert len(cache) == 2 * Rules().shortlist


def test_past_the_deadline_the_static_arm_answers_and_nothing_is_encoded(
    both: Ensemble, tables: Ensemble
) -> None:
    cache = MemoryCache(1 << 24)
    request = SearchRequest(pattern=PATTERN, tools=TOOLS)
    outcome = cold(both, tables, 0.0, cache).select(request)
    assert (outcome.path, outcome.provenance.arm, outcome.provenance.embedded) == (
        "static",
        "static",
        "none",
    )
    assert len(cache) == 0
    assert outcome.rescue is None  # an answer with tools: nothing to rescue
    off = cold(both, tables, math.inf, cache, Rules(shortlist=0)).select(request)
    assert (off.provenance.arm, off.ranking) == ("static", outcome.ranking)
    assert len(cache) == 0


def test_a_static_answer_that_would_say_no_match_is_read_by_the_models(
    both: Ensemble, tables: Ensemble
) -> None:
    """Past the deadline the static arm's answer stands, unless it says no match: then the
    leaders are read by the models (encoded now, predicted within ``Shortlist.rescue``,
    whatever is left of the deadline), and the answer, or its "no match", rests on their
    cosines as a warm catalog's does."""
    request = SearchRequest(pattern="umbrella needed?", tools=TOOLS)
    alone = cold(both, tables, 0.0, MemoryCache(1 << 24), Rules(shortlist=0)).select(request)
    assert (alone.provenance.arm, alone.ranking.no_match, alone.ranking.names) == (
        "static",
        True,
        [],
    )
    assert alone.rescue is None  # the shortlist off: no rescue asked
    cache = MemoryCache(1 << 24)
    outcome = cold(both, tables, 0.0, cache, seconds_per_char=1e-4).select(request)
    assert (outcome.path, outcome.provenance.arm, outcome.rescue) == ("static", "shortlist", "read")
    assert outcome.ranking.names[0] == "get_weather"
    assert len(cache) == 2 * Rules().shortlist  # encoded for it, kept for the next request
    cake = cold(both, tables, 0.0, MemoryCache(1 << 24), seconds_per_char=1e-4).select(
        SearchRequest(pattern="bake a cake", tools=TOOLS)
    )
    assert (cake.provenance.arm, cake.ranking.no_match, cake.ranking.names, cake.rescue) == (
        "shortlist",
        True,
        [],
        "read",
    )
    warm = Selector(encoder=both, embed_deadline=math.inf)
    assert warm.select(SearchRequest(pattern="bake a cake", tools=TOOLS)).ranking.no_match


def test_the_rescue_has_its_own_limit(both: Ensemble, tables: Ensemble) -> None:
    """Leaders predicted past ``Shortlist.rescue`` (at a second a character: minutes) are
    not encoded: the static answer's "no match" stands."""
    cache = MemoryCache(1 << 24)
    request = SearchRequest(pattern="umbrella needed?", tools=TOOLS)
    outcome = cold(both, tables, 0.0, cache, seconds_per_char=1.0).select(request)
    assert (outcome.provenance.arm, outcome.ranking.no_match) == ("static", True)
    assert outcome.rescue == "declined"
    assert len(cache) == 0


class Lookups(NullCache):
    """Counts the lookups of the catalogs' cache (the dense arm's, once a model a request)."""

    def __init__(self) -> None:
        self.calls = 0

    def get_many(self, keys: Sequence[bytes], dim: int) -> list[FloatArray | None]:
        self.calls += 1
        return super().get_many(keys, dim)


def test_the_rescue_reads_the_arms_before_the_shortlist_once(
    both: Ensemble, tables: Ensemble
) -> None:
    """The rescue reads the answer again from the shortlist on: the dense arm looked the
    catalog up (and queued its job) once, and the outcome says its job was deferred."""
    lookups = Lookups()
    selector = cold(
        both, tables, 0.0, MemoryCache(1 << 24), seconds_per_char=1e-4, catalogs=lookups
    )
    outcome = selector.select(SearchRequest(pattern="umbrella needed?", tools=TOOLS))
    assert (outcome.provenance.arm, outcome.ranking.names[0]) == ("shortlist", "get_weather")
    assert lookups.calls == len(both.parts)
    assert outcome.deferred


def test_only_an_unread_no_match_is_rescued(
    both: Ensemble, tables: Ensemble, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arms from the shortlist on are read a second time only where the shortlist
    declined for time and the answer says no match: not with the shortlist off, nor with
    every tool filtered out, nor for an answer with tools; a rescue the limit declines
    leaves the first ranking as it was."""
    reads: list[int] = []
    read = selector_module.read_columns

    def counted(*args: Any) -> Any:
        reads.append(len(args[0]))
        return read(*args)

    monkeypatch.setattr(selector_module, "read_columns", counted)

    def passes(selector: Selector, pattern: str, filters: Filters | None = None) -> int:
        reads.clear()
        selector.select(SearchRequest(pattern=pattern, tools=TOOLS, filters=filters))
        return len(reads)

    quick, cache = {"seconds_per_char": 1e-4}, MemoryCache(1 << 24)
    off = cold(both, tables, 0.0, cache, Rules(shortlist=0), **quick)
    assert passes(off, "umbrella needed?") == 2  # the arms before the shortlist, then the rest
    assert passes(cold(both, tables, 0.0, cache, **quick), PATTERN) == 2
    denied = Filters(deny=["*"])
    assert passes(cold(both, tables, 0.0, cache, **quick), "umbrella needed?", denied) == 2
    assert passes(cold(both, tables, 0.0, cache, **quick), "umbrella needed?") == 3
    slow = cold(both, tables, 0.0, MemoryCache(1 << 24), seconds_per_char=1.0)
    assert passes(slow, "umbrella needed?") == 3  # tried, declined: the static answer stands
    never = cold(both, tables, 0.0, MemoryCache(1 << 24), rescue=0.0, **quick)
    assert passes(never, "umbrella needed?") == 2  # TOOL_SELECTOR_SHORTLIST_RESCUE_MS=0
    outcome = never.select(SearchRequest(pattern="umbrella needed?", tools=TOOLS))
    assert (outcome.provenance.arm, outcome.ranking.no_match, outcome.rescue) == (
        "static",
        True,
        None,
    )


def test_the_rescues_metric_counts_each_result() -> None:
    assert get_args(Rescue) == RESCUE_RESULTS


def test_the_service_wires_the_rescues_limit() -> None:
    def rescue(ms: int) -> float:
        settings = Settings(encoder="none", shortlist_rescue_ms=ms)
        return build_selector(settings, Metrics(CollectorRegistry())).vectors.shortlist.rescue

    assert (rescue(500), rescue(0)) == (0.5, 0.0)


def test_the_deadline_counts_from_when_the_catalog_is_at_hand(
    both: Ensemble, tables: Ensemble, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new catalog's build is not embedding work: one that took longer than the whole
    deadline (a clock moved 1,000 s by it) leaves its first answer the shortlist's room."""
    real, skew = time.perf_counter, [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: real() + skew[0])
    build = tool_vectors.build_catalog

    def slow(*args: Any) -> Any:
        skew[0] += 1000.0
        return build(*args)

    monkeypatch.setattr(tool_vectors, "build_catalog", slow)
    selector = cold(both, tables, 100.0, MemoryCache(1 << 24), seconds_per_char=1e-3)
    outcome = selector.select(SearchRequest(pattern=PATTERN, tools=TOOLS))
    assert skew == [1000.0]  # built once, in this request
    assert (outcome.provenance.arm, outcome.ranking.names[0]) == ("shortlist", "send_message")


def test_cached_leaders_need_no_time(both: Ensemble, tables: Ensemble) -> None:
    """A second request finds the vectors the first encoded: within any deadline."""
    cache = MemoryCache(1 << 24)
    request = SearchRequest(pattern=PATTERN, tools=TOOLS)
    first = cold(both, tables, math.inf, cache).select(request)
    again = cold(both, tables, 0.0, cache).select(request)
    assert (again.provenance.arm, again.ranking.names) == ("shortlist", first.ranking.names)


def test_a_multi_step_task_keeps_the_static_arms_answer(both: Ensemble, tables: Ensemble) -> None:
    task = (
        "First read the file with last quarter's figures from the local disk and check that "
        "every row has a date. Then post a short summary of the totals to the team's chat "
        "channel so everyone sees it. Finally look up the weather in Lisbon for tomorrow "
        "because the offsite depends on it and we need to know."
    )
    rules = Rules(steps=SHIPPED_STEPS)
    cache = MemoryCache(1 << 24)
    outcome = cold(both, tables, math.inf, cache, rules).select(
        SearchRequest(pattern=task, tools=TOOLS)
    )
    assert outcome.provenance.arm == "static"
    assert len(cache) == 0


def test_the_shortlist_reads_the_catalogs_own_texts(both: Ensemble, tables: Ensemble) -> None:
    """bge-small reads a tool's ``static_text`` as the dense arm has it read, so the cached
    vectors are the ones the background job would make."""
    cache = MemoryCache(1 << 24)
    selector = cold(both, tables, math.inf, cache)
    selector.select(SearchRequest(pattern=PATTERN, tools=TOOLS))
    entry = selector.entry(ToolSource.of(TOOLS)).entry
    for part in both.parts:
        alone = np.stack([part.encode([t])[0] for t in entry.texts(part.model_id)])
        cached = cache.get_many(entry.keys(part.model_id), part.dim)
        held = [i for i, v in enumerate(cached) if v is not None]
        assert len(held) == Rules().shortlist
        for i in held:
            vector = cached[i]
            assert vector is not None
            assert int(np.argmax(alone @ vector)) == i
            assert float(alone[i] @ vector) > 0.98


def test_the_leaders_are_picked_among_the_tools_the_filters_leave_in(
    both: Ensemble, tables: Ensemble
) -> None:
    """A denied tool is neither encoded nor in the answer; the allowed tool after the
    static arm's first ten takes its place among the leaders."""
    request = SearchRequest(pattern=PATTERN, tools=TOOLS)
    plain = MemoryCache(1 << 24)
    cold(both, tables, math.inf, plain).select(request)
    selector = cold(both, tables, math.inf, MemoryCache(1 << 24))
    entry = selector.entry(ToolSource.of(TOOLS)).entry
    keys = entry.keys(both.primary.model_id)
    leaders = [i for i, v in enumerate(plain.get_many(keys, both.primary.dim)) if v is not None]
    assert len(leaders) == Rules().shortlist
    denied = entry.catalog.texts[leaders[0]].name
    filtered = SearchRequest(pattern=PATTERN, tools=TOOLS, filters=Filters(deny=[denied]))
    cache = selector.vectors.shortlist.cache
    outcome = selector.select(filtered)
    assert outcome.provenance.arm == "shortlist"
    assert denied not in outcome.ranking.names
    held = [i for i, v in enumerate(cache.get_many(keys, both.primary.dim)) if v is not None]
    assert len(held) == Rules().shortlist
    assert leaders[0] not in held
    assert set(leaders[1:]) < set(held)


def test_with_every_tool_filtered_out_nothing_is_encoded(both: Ensemble, tables: Ensemble) -> None:
    cache = MemoryCache(1 << 24)
    request = SearchRequest(pattern=PATTERN, tools=TOOLS, filters=Filters(deny=["*"]))
    outcome = cold(both, tables, math.inf, cache).select(request)
    assert (outcome.provenance.arm, outcome.ranking.names) == ("static", [])
    assert len(cache) == 0


@given(
    st.lists(st.floats(-1, 1), min_size=4, max_size=30),
    st.integers(1, 4),
    st.floats(-1, 1),
)
def test_mixed_keeps_the_exact_and_puts_the_rest_no_higher(
    static: list[float], size: int, shift: float
) -> None:
    column = np.asarray(static, np.float32)
    picked = np.argsort(-column, kind="stable")[:size]
    exact = np.clip(column[picked] + shift, -1, 1).astype(np.float32)
    mixed = _mixed(column, picked, exact)
    np.testing.assert_allclose(mixed[picked], exact)
    rest = np.setdiff1d(np.arange(len(column)), picked)
    assert (mixed[rest] <= exact.min() + 1e-6).all()
    order = np.argsort(column[rest], kind="stable")
    assert (np.diff(mixed[rest][order]) >= -1e-6).all()  # the static order, never reversed


def test_the_setting_is_the_fitted_size_and_zero_turns_it_off() -> None:
    assert Settings().shortlist_tools == SHORTLIST
    assert Settings.from_env({"TOOL_SELECTOR_SHORTLIST_TOOLS": "0"}).shortlist_tools == 0


def test_with_minilms_table_alone_minilm_reads_the_leaders(
    both: Ensemble, tables: Ensemble
) -> None:
    """bge-small's table missing (a warning at start): the static arm pairs MiniLM's table with
    MiniLM alone, and so does the shortlist."""
    cache = MemoryCache(1 << 24)
    selector = cold(both, Ensemble([tables.primary]), math.inf, cache)
    outcome = selector.select(SearchRequest(pattern=PATTERN, tools=TOOLS))
    assert (outcome.provenance.arm, outcome.ranking.names[0]) == ("shortlist", "send_message")
    assert outcome.provenance.encoders == (tables.primary, both.primary)
    assert len(cache) == Rules().shortlist  # MiniLM's vectors only


def test_the_leaders_encode_feeds_each_models_rate(both: Ensemble, tables: Ensemble) -> None:
    """The shortlist's own encode (ten texts a model) is measured like a background batch:
    the prediction of the next one reads this machine's rate for each model, set by it."""
    selector = cold(both, tables, math.inf, MemoryCache(1 << 24))
    text = ["x" * 100]
    assert selector.jobs.estimate(both.primary.model_id, text) == pytest.approx(0.04)
    timings: list[tuple[str, int, float]] = []
    observe = selector.jobs.observe

    def seen(model: str, texts: list[str], seconds: float) -> None:
        timings.append((model, len(texts), seconds))
        observe(model, texts, seconds)

    selector.jobs.observe = seen  # type: ignore[method-assign]
    selector.select(SearchRequest(pattern=PATTERN, tools=TOOLS))
    # side by side, so either may be timed first
    assert sorted((m, n) for m, n, _ in timings) == sorted(
        (p.model_id, SHORTLIST) for p in both.parts
    )
    entry, cache = selector.entry(ToolSource.of(TOOLS)).entry, selector.vectors.shortlist.cache
    for model, _, seconds in timings:
        part = next(p for p in both.parts if p.model_id == model)
        held = [
            t
            for t, v in zip(
                entry.texts(model), cache.get_many(entry.keys(model), part.dim), strict=True
            )
            if v is not None
        ]
        rate = seconds / sum(map(len, held))
        assert selector.jobs.estimate(part.model_id, text) == pytest.approx(100 * rate)


def test_the_leaders_wait_for_what_their_length_will_cost(both: Ensemble, tables: Ensemble) -> None:
    """The same deadline has room for ten short leaders and not for ten long ones: the
    prediction reads their characters (0.4 ms each before any measure)."""
    short = [Tool(name=t.name, description=t.description) for t in TOOLS]
    long = [Tool(name=t.name, description=(t.description + ". ") * 12) for t in TOOLS]
    deadline = 2 * 10 * 90 * 4e-4  # room for ten leaders of 90 characters a model
    request = [SearchRequest(pattern=PATTERN, tools=tools) for tools in (short, long)]
    got = [cold(both, tables, deadline, MemoryCache(1 << 24)).select(r) for r in request]
    assert [o.provenance.arm for o in got] == ["shortlist", "static"]


def test_a_filter_leaving_fewer_tools_than_the_shortlist_reads_them_all(
    both: Ensemble, tables: Ensemble
) -> None:
    allowed = ["send_message", "read_file", "get_weather"]
    cache = MemoryCache(1 << 24)
    request = SearchRequest(pattern=PATTERN, tools=TOOLS, filters=Filters(allow=allowed))
    outcome = cold(both, tables, math.inf, cache).select(request)
    assert outcome.provenance.arm == "shortlist"
    assert outcome.ranking.names[0] == "send_message"
    assert set(outcome.ranking.names) <= set(allowed)
    assert len(cache) == 2 * len(allowed)


TEN = [Tool(name=t.name, description=(t.description + ". ") * 6) for t in TOOLS[:7] + TOOLS[-3:]]


class Threads:
    """Records the thread each model encodes ten texts in, the leaders (wraps its
    ``encode``; a query vector is one text)."""

    def __init__(self, both: Ensemble) -> None:
        self.seen: list[tuple[str, str]] = []
        for part in both.parts:
            encode = part.encode

            def recorded(texts: list[str], _e: Any = encode, _m: str = part.model_id) -> Any:
                if len(texts) == SHORTLIST:
                    self.seen.append((_m, threading.current_thread().name))
                return _e(texts)

            object.__setattr__(part, "encode", recorded)


def test_the_models_encode_the_leaders_side_by_side(tables: Ensemble) -> None:
    """MiniLM in the request's thread, bge-small on the helper meanwhile; the same vectors
    as one after the other, and the helper free after."""
    both = encoder_from_settings(Settings())  # its own: its parts' encode are wrapped
    assert isinstance(both, Ensemble)
    threads = Threads(both)
    request = SearchRequest(pattern=PATTERN, tools=TEN)
    side = cold(both, tables, math.inf, MemoryCache(1 << 24))
    got = side.select(request)
    first, second = (p.model_id for p in both.parts)
    here = threading.current_thread().name
    assert sorted(threads.seen) == [(first, here), (second, "query-encode_0")]
    helper = side.query_vectors.helper
    assert helper is side.vectors.helper
    assert helper.take() is not None  # left once the leaders were read
    alone = cold(both, tables, math.inf, MemoryCache(1 << 24))
    assert alone.query_vectors.helper.take() is not None  # another request is encoding
    threads.seen.clear()
    one_by_one = alone.select(request)
    assert threads.seen == [(first, here), (second, here)]
    assert (got.provenance.arm, one_by_one.provenance.arm) == ("shortlist", "shortlist")
    assert got.ranking == one_by_one.ranking


def test_side_by_side_the_longest_models_prediction_is_the_cost(
    both: Ensemble, tables: Ensemble
) -> None:
    """A deadline with room for the longer model's leaders but not for both in turn: the
    shortlist reads them when the helper is free, and not while another request holds it.
    (At a second a character: hundreds of seconds either side of the deadline.)"""
    request = SearchRequest(pattern=PATTERN, tools=TEN)
    probe = cold(both, tables, 0.0, MemoryCache(1 << 24), seconds_per_char=1.0)
    entry = probe.entry(ToolSource.of(TEN)).entry
    costs = [probe.jobs.estimate(p.model_id, entry.texts(p.model_id)) for p in both.parts]
    assert len(entry.catalog) == SHORTLIST  # the leaders are every tool
    assert min(costs) > 500  # seconds
    deadline = max(costs) + min(costs) / 2
    cache = MemoryCache(1 << 24)
    busy = cold(both, tables, deadline, cache, seconds_per_char=1.0)
    assert busy.query_vectors.helper.take() is not None  # another request is encoding
    assert busy.select(request).provenance.arm == "static"
    assert len(cache) == 0  # nothing encoded
    free = cold(both, tables, deadline, cache, seconds_per_char=1.0).select(request)
    assert free.provenance.arm == "shortlist"
    assert len(cache) == 2 * SHORTLIST


def test_the_catalogs_matrix_is_its_own_batches(both: Ensemble, tables: Ensemble) -> None:
    """As the service wires it (``Shortlist(deadline, cache)``): the leaders' vectors are kept
    apart from the catalogs' cache, the next request reads them from there, and the catalog
    embedded after is the one an in-process run embeds (a batch of ten's int8 vectors differ
    a little from a catalog batch's)."""
    cache = MemoryCache(1 << 24)
    jobs = EmbeddingJobs()
    jobs.close(0.0)
    shortlist = Shortlist(math.inf, cache)
    selector = Selector(
        encoder=both,
        cache=cache,
        static=tables,
        jobs=jobs,
        embed_deadline=0.0,
        shortlist=shortlist,
    )
    request = SearchRequest(pattern=PATTERN, tools=TOOLS)
    first = selector.select(request)
    assert first.provenance.arm == "shortlist"
    assert (len(cache), len(shortlist.kept)) == (0, 2 * SHORTLIST)
    nothing = Shortlist(0.0, cache, shortlist.kept)  # no time: what is kept, or nothing
    again = Selector(encoder=both, static=tables, jobs=jobs, embed_deadline=0.0, shortlist=nothing)
    assert again.select(request).provenance.arm == "shortlist"
    _, matrix = selector.vectors.embedded(TOOLS, selector.encoders)
    _, fresh = Selector(encoder=both, cache=MemoryCache(1 << 24)).vectors.embedded(TOOLS, both)
    assert matrix is not None
    assert fresh is not None
    np.testing.assert_array_equal(matrix, fresh)
