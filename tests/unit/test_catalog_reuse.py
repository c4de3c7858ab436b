"""Catalog reuse, the query LRU, and the bounded cold path, on a fake encoder."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from tests.fakes import HashingEncoder
from tests.support import wait_until
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.lru import BoundedLRU
from tool_selector.offline.naive import NaiveSelector
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import (
    MEMO_ENTRY_BYTES,
    MEMO_MIN_BYTES,
    TERMS_A_TOOL,
    CatalogEntry,
    CatalogStore,
    _weight,
    fingerprint,
)
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import Catalog, build_catalog
from tool_selector.ranking.dense import FloatArray
from tool_selector_client.wire import SearchRequest, Tool

TOOLS = [
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="read_file", description="Read a file from disk"),
    Tool(name="create_issue", description="Open a GitHub issue"),
]


class SlowEncoder(HashingEncoder):
    """The hashing encoder, taking ``delay`` seconds per text (a stand-in for a real model)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.texts = 0

    def encode(self, texts: Sequence[str]) -> FloatArray:
        self.texts += len(texts)
        time.sleep(self.delay * len(texts))
        return super().encode(texts)


def request(pattern: str = "slack message", tools: list[Tool] = TOOLS) -> SearchRequest:
    return SearchRequest(pattern=pattern, tools=tools)


def selector(encoder: HashingEncoder, deadline: float = 10.0, **kw: object) -> Selector:
    return Selector(
        encoder=encoder,
        cache=MemoryCache(1 << 20),
        catalogs=CatalogStore(1000),
        queries=BoundedLRU(100),
        embed_deadline=deadline,
        **kw,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("other", "same"),
    [
        (list(TOOLS), True),
        (list(reversed(TOOLS)), False),
        ([*TOOLS[:2], Tool(name="create_issue", description="Open a GitLab issue")], False),
    ],
    ids=["same-tools", "reordered", "description-changed"],
)
def test_fingerprint_follows_the_tool_texts(other: list[Tool], same: bool) -> None:
    assert (fingerprint(TOOLS) == fingerprint(other)) is same


def test_catalog_store_is_bounded_in_tools() -> None:
    store = CatalogStore(max_tools=4)
    for name in ("a", "b"):
        store.find(ToolSource.of(TOOLS, name), build_catalog)
    assert (store.get("a"), store.get("b") is not None) == (None, True)


def test_a_repeated_catalog_is_reused_without_encoding_tools() -> None:
    enc = HashingEncoder()
    sel = selector(enc)
    sel.select(request("slack message"))
    calls = len(enc.calls)
    second = sel.select(request("read a file"))
    assert (second.catalog_reused, second.path, enc.calls[calls:]) == (True, "hybrid", [1])


def test_a_repeated_query_is_not_encoded_again() -> None:
    enc = HashingEncoder()
    sel = selector(enc)
    sel.select(request())
    calls = len(enc.calls)
    again = sel.select(request())
    assert (again.query_cached, len(enc.calls)) == (True, calls)


def test_a_changed_description_is_embedded_again() -> None:
    enc = SlowEncoder(0)
    sel = selector(enc)
    sel.select(request())
    before = enc.texts
    changed = [*TOOLS[:2], Tool(name="create_issue", description="Open a GitLab issue")]
    sel.select(request(tools=changed))
    assert enc.texts - before == 1  # only the changed tool; the query vector is cached


def test_cold_catalog_past_the_deadline_answers_lexically_then_hybrid() -> None:
    sel = selector(SlowEncoder(0.01), deadline=0.0)
    first = sel.select(request())
    assert sel.jobs.drain(10)
    second = sel.select(request())
    assert (first.path, first.deferred, second.path) == ("lexical", True, "hybrid")


def test_cold_catalog_past_the_deadline_answers_from_the_static_arm_then_hybrid() -> None:
    sel = selector(SlowEncoder(0.01), deadline=0.0, static=HashingEncoder())
    first = sel.select(request())
    assert sel.jobs.drain(10)
    second = sel.select(request())
    assert (first.path, first.ranking.names[0], second.path) == ("static", "send_message", "hybrid")


class OtherSpace(HashingEncoder):
    """A static arm whose vectors live in another space than the model's (other dimension)."""

    model_id = "test/other-space"
    dim = 32


@pytest.mark.parametrize(
    ("static", "model_encodes_query"),
    [(HashingEncoder(), True), (OtherSpace(), False)],
    ids=["same-space-uses-the-model-query", "other-space-uses-its-own"],
)
def test_static_arm_query_vector(static: HashingEncoder, model_encodes_query: bool) -> None:
    model = SlowEncoder(0.01)
    sel = selector(model, deadline=0.0, static=static)
    assert sel.select(request()).path == "static"
    assert (1 in model.calls) is model_encodes_query


def test_static_arm_answers_while_the_model_loads() -> None:
    sel = Selector(static=HashingEncoder())
    assert sel.select(request()).path == "static"


def test_cold_catalog_within_the_deadline_is_embedded_inline() -> None:
    outcome = selector(SlowEncoder(0), deadline=10.0).select(request())
    assert (outcome.path, outcome.deferred) == ("hybrid", False)


def test_concurrent_requests_for_one_catalog_share_one_job() -> None:
    enc = SlowEncoder(0.02)
    sel = selector(enc, deadline=0.0)
    threads = [threading.Thread(target=sel.select, args=(request(),)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sel.jobs.drain(10)
    assert enc.texts == len(TOOLS)


def test_background_jobs_are_deduplicated_and_bounded() -> None:
    jobs = EmbeddingJobs(max_queued=1)
    job, owner = jobs.claim("a")
    again, owner_again = jobs.claim("a")
    gate = threading.Event()
    jobs.enqueue(job, lambda: gate.wait(5) and None)  # type: ignore[arg-type, func-returns-value]
    time.sleep(0.05)  # the worker takes it off the queue
    jobs.enqueue(jobs.claim("b")[0], lambda: None)  # type: ignore[arg-type, return-value]
    dropped = jobs.enqueue(jobs.claim("c")[0], lambda: None)  # type: ignore[arg-type, return-value]
    gate.set()
    assert (owner, owner_again, again is job, dropped) == (True, False, True, False)


def waiting(gate: threading.Event, seconds: float = 5) -> FloatArray:
    gate.wait(seconds)
    return np.zeros((0, 4), dtype=np.float32)


def test_the_most_asked_queued_catalog_is_embedded_first() -> None:
    jobs, gate, order = EmbeddingJobs(), threading.Event(), []
    jobs.enqueue(jobs.claim("running")[0], lambda: waiting(gate))
    time.sleep(0.05)  # the worker is busy with it
    for key in ("once", "thrice"):
        jobs.enqueue(jobs.claim(key)[0], lambda k=key: order.append(k) or waiting(gate, 0))  # type: ignore[misc]
    jobs.claim("thrice")
    jobs.claim("thrice")
    gate.set()
    assert jobs.drain(5)
    assert order == ["thrice", "once"]


def test_warm_up_yields_while_a_request_catalog_is_embedded() -> None:
    jobs, embedded = EmbeddingJobs(), threading.Event()

    def asked() -> FloatArray:
        matrix = waiting(threading.Event(), 0.3)
        embedded.set()
        return matrix

    jobs.enqueue(jobs.claim("asked")[0], asked)
    jobs.yield_to_asked()
    assert embedded.is_set()


def test_warm_embeds_a_catalog_ahead_of_requests() -> None:
    enc = SlowEncoder(0)
    sel = selector(enc, deadline=0.0)
    encoded = sel.warm(TOOLS)
    outcome = sel.select(request())
    assert (encoded, outcome.path, outcome.catalog_reused) == (3, "hybrid", True)


def test_an_empty_cache_is_kept_not_mistaken_for_none() -> None:
    catalogs = CatalogStore(10)
    sel = Selector(cache=MemoryCache(1 << 10), catalogs=catalogs)
    assert (sel.cache.name, sel.catalogs is catalogs) == ("memory", True)


def test_the_naive_baseline_ranks_like_the_pipeline_on_an_easy_query() -> None:
    enc = HashingEncoder()
    naive = NaiveSelector(encoder=enc).select(request("slack message"))
    fast = selector(enc).select(request("slack message"))
    assert naive.ranking.names[:1] == fast.ranking.names[:1] == ["send_message"]


def test_embedded_returns_the_catalog_select_answers_from() -> None:
    enc = HashingEncoder()
    sel = selector(enc)
    catalog, matrix = sel.embedded(TOOLS)
    assert [t.name for t in catalog.texts] == [t.name for t in TOOLS]
    assert matrix is not None
    assert matrix.shape == (len(TOOLS), enc.dim)
    calls = len(enc.calls)
    outcome = sel.select(request())
    assert outcome.catalog_reused
    assert outcome.cache_misses == 0
    assert len(enc.calls) == calls + 1  # only the query was encoded


def test_embedded_without_encoder_has_no_matrix() -> None:
    catalog, matrix = Selector(encoder=None).embedded(TOOLS)
    assert (len(catalog), matrix) == (len(TOOLS), None)


def test_close_stops_background_embedding_between_chunks() -> None:
    enc = SlowEncoder(0.01)
    sel = selector(enc, deadline=0.0)
    many = [Tool(name=f"tool_{i}", description=f"does thing {i}") for i in range(640)]
    assert sel.select(request(tools=many)).deferred
    wait_until(lambda: enc.texts > 0, 5, "background embedding")
    assert sel.jobs.close(timeout=5)
    assert (enc.texts < len(many), sel.jobs.depth) == (True, 0)


def test_after_close_nothing_is_queued_and_no_thread_starts() -> None:
    sel = selector(SlowEncoder(0), deadline=0.0)
    sel.jobs.close()
    outcome = sel.select(request())
    assert (outcome.path, sel.jobs.depth, sel.jobs._thread) == ("lexical", 0, None)


def test_close_releases_queued_jobs_to_their_waiters() -> None:
    jobs = EmbeddingJobs(max_queued=4)
    gate = threading.Event()
    first, _ = jobs.claim("a")
    jobs.enqueue(first, lambda: gate.wait(5))  # type: ignore[arg-type, return-value]
    queued, _ = jobs.claim("b")
    jobs.enqueue(queued, lambda: None)  # type: ignore[arg-type, return-value]
    closer = threading.Thread(target=jobs.close)
    closer.start()
    assert (queued.wait(2), queued._done.is_set()) == (None, True)
    gate.set()
    closer.join(5)
    assert (closer.is_alive(), jobs.depth) == (False, 0)


def test_a_warmed_catalog_serves_a_request_keyed_by_its_bytes() -> None:
    """Warm-up keys catalogs by fingerprint; requests by raw bytes: the first must not rebuild."""
    enc = SlowEncoder(0)
    sel = selector(enc, deadline=0.0)
    sel.warm(TOOLS)
    texts = enc.texts
    outcome = sel.select(Ask.of(request(), key="raw:first-spelling"))
    assert (outcome.catalog_reused, outcome.path, enc.texts - texts) == (True, "hybrid", 1)


def test_a_catalog_keyed_by_fingerprint_is_aliased_under_a_byte_key() -> None:
    """Sharing the built parts, but with the duplicate count of the request's own bytes."""
    sel = selector(HashingEncoder())
    first = sel.select(request())  # no byte key: stored under the tools' fingerprint
    doubled = request(tools=[*TOOLS, TOOLS[0]])
    aliased = sel.select(Ask.of(doubled, key="raw:doubled"))
    again = sel.select(Ask.of(doubled, key="raw:doubled"))
    assert first.catalog is not None
    assert (aliased.catalog is first.catalog, aliased.catalog_reused) == (True, True)
    assert (aliased.duplicates, again.duplicates, again.catalog is first.catalog) == (1, 1, True)


def test_empty_catalogs_count_against_the_bound() -> None:
    store = CatalogStore(max_tools=2)
    for key in ("a", "b", "c"):
        store.find(ToolSource.of([], key), build_catalog)
    assert (len(store), store.get("a")) == (2, None)


def test_an_evicted_catalog_is_freed_while_its_embedding_job_runs() -> None:
    """Jobs hold texts, not catalogs: memory stays bounded by the catalog cache."""
    gate = threading.Event()

    class Gated(HashingEncoder):
        def encode(self, texts: Sequence[str]) -> FloatArray:
            gate.wait(10)
            return super().encode(texts)

    def catalogs() -> int:
        gc.collect()
        return sum(isinstance(o, Catalog) for o in gc.get_objects())

    before = catalogs()
    sel = Selector(
        encoder=Gated(), cache=MemoryCache(1 << 20), catalogs=CatalogStore(3), embed_deadline=0
    )
    other = [Tool(name=f"other_{i}", description="something else") for i in range(3)]
    sel.select(request())  # its job starts and blocks in encode
    sel.select(request(tools=other))  # evicts the first catalog (3 tools cached at most)
    alive = catalogs() - before
    gate.set()
    assert sel.jobs.drain(10)
    assert (alive, sel.select(request(tools=other)).path) == (1, "hybrid")


def test_cached_vectors_do_not_pin_their_batch() -> None:
    cache = MemoryCache(1 << 20)
    sel = Selector(encoder=HashingEncoder(), cache=cache, catalogs=CatalogStore(100))
    sel.select(request())
    assert all(
        v is not None and v.base is None
        for v in cache.get_many(cache._items.keys(), HashingEncoder().dim)
    )


def test_memo_derives_once_per_key_and_is_bounded_by_bytes() -> None:
    entry = CatalogEntry.of(build_catalog([Tool(name="a", description="b")]))
    calls: list[int] = []

    def derive() -> tuple[np.ndarray, int]:
        calls.append(1)
        return np.zeros(entry._memo.capacity // 8, dtype=np.float32), 1

    entry.memo(("k",), derive)
    entry.memo(("k",), derive)
    assert len(calls) == 1
    for i in range(3):  # each weighs half the bound: the oldest is dropped
        entry.memo((i,), derive)
    entry.memo(("k",), derive)
    assert len(calls) == 5


def test_a_small_catalog_s_memo_holds_a_few_entries_whatever_their_keys() -> None:
    """A flood of distinct filters or conversations on a ten-tool catalog kept 16,000 memo
    entries (64 bytes each as weighed, their keys the caller's whole value: 2.7 GB after
    2,000 requests of long recent tools). Now an entry weighs its overhead too and the
    bound follows the catalog's size."""
    entry = CatalogEntry.of(build_catalog([Tool(name=f"t{i}", description="d") for i in range(10)]))
    for i in range(10_000):
        entry.memo(("context", i), lambda: (np.zeros(10, dtype=np.float32), None))
    assert entry._memo.capacity == MEMO_MIN_BYTES
    assert len(entry._memo) == MEMO_MIN_BYTES // MEMO_ENTRY_BYTES


def test_a_catalog_of_many_distinct_terms_weighs_them() -> None:
    """The cache's bound counted tools: 480 tools of 1,455 random words each held 300 MB
    as 480 of the 50,000 allowed. Real catalogs (2-10 terms a tool) weigh their tools."""
    words = [f"w{i:06d}" for i in range(4_000)]
    heavy = build_catalog(
        [
            Tool(name=f"t{i}", description=" ".join(words[i * 400 : (i + 1) * 400]))
            for i in range(10)
        ]
    )
    light = build_catalog([Tool(name=f"t{i}", description="read a file") for i in range(10)])
    assert _weight(CatalogEntry.of(heavy)) >= 4_000 // TERMS_A_TOOL
    assert _weight(CatalogEntry.of(light)) == 10
