"""One contract for every embedding cache (memory, redis, none, tiered), then each tier's own
behaviour. The Redis cases run against a real redis-server on a free port."""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
import redis

from tests.fakes import HashingEncoder
from tests.support import RedisProcess, start_redis
from tool_selector.embeddings.breaker import CircuitBreaker
from tool_selector.embeddings.cache import (
    EmbeddingCache,
    MemoryCache,
    NullCache,
    TieredCache,
    embedding_key,
)
from tool_selector.embeddings.redis_cache import KEY_PREFIX, RedisCache
from tool_selector.logs import Throttle
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import REDIS_MAX_TTL
from tool_selector_client.wire import SearchRequest, Tool

T = TypeVar("T")


DIM = 8


def vec(seed: int, dim: int = DIM) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


TOOLS = [
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="read_file", description="Read a file from disk"),
    Tool(name="create_issue", description="Open a GitHub issue"),
]


def key(text: str) -> bytes:
    return embedding_key("test/model", 1, text)


@pytest.fixture(params=["memory", "redis", "none", "tiered"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EmbeddingCache]:
    redis: RedisProcess | None = None
    made: EmbeddingCache
    if request.param == "memory":
        made = MemoryCache(1 << 20)
    elif request.param == "none":
        made = NullCache()
    else:
        redis = start_redis(tmp_path)
        far = RedisCache(redis.url)
        made = far if request.param == "redis" else TieredCache(MemoryCache(1 << 20), far)
    yield made
    made.close()
    if redis:
        redis.stop()


def stores(cache: EmbeddingCache) -> bool:
    return cache.name != "none"


def test_unknown_keys_miss(cache: EmbeddingCache) -> None:
    assert cache.get_many([key("a"), key("b")], DIM) == [None, None]


def test_empty_lookup_is_empty(cache: EmbeddingCache) -> None:
    assert cache.get_many([], DIM) == []


def test_stored_vectors_come_back_in_key_order(cache: EmbeddingCache) -> None:
    cache.put_many([(key("a"), vec(1)), (key("b"), vec(2))])
    assert cache.flush(5)
    got = cache.get_many([key("b"), key("missing"), key("a")], DIM)
    if not stores(cache):
        assert got == [None, None, None]
        return
    assert got[1] is None
    np.testing.assert_array_equal(got[0], vec(2))
    np.testing.assert_array_equal(got[2], vec(1))


def test_a_rewrite_replaces_the_vector(cache: EmbeddingCache) -> None:
    cache.put_many([(key("a"), vec(1))])
    cache.put_many([(key("a"), vec(2))])
    assert cache.flush(5)
    got = cache.get_many([key("a")], DIM)[0]
    assert got is None if not stores(cache) else np.array_equal(got, vec(2))


def test_vectors_are_float32(cache: EmbeddingCache) -> None:
    cache.put_many([(key("a"), vec(1).astype(np.float64))])  # type: ignore[list-item]
    cache.flush(5)
    got = cache.get_many([key("a")], DIM)[0]
    assert got is None if not stores(cache) else got.dtype == np.float32


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("m1", 1, "text"), ("m2", 1, "text")),
        (("m1", 1, "text"), ("m1", 2, "text")),
        (("m1", 1, "text"), ("m1", 1, "text!")),
    ],
    ids=["model", "text-format", "text"],
)
def test_key_changes_with_each_part(a: tuple[str, int, str], b: tuple[str, int, str]) -> None:
    assert embedding_key(*a) != embedding_key(*b)


def test_memory_evicts_least_recently_used_by_bytes() -> None:
    cache = MemoryCache(max_bytes=2 * 32)
    cache.put_many([(key("a"), vec(1)), (key("b"), vec(2))])
    cache.get_many([key("a")], DIM)
    cache.put_many([(key("c"), vec(3))])
    assert [v is not None for v in cache.get_many([key("a"), key("b"), key("c")], DIM)] == [
        True,
        False,
        True,
    ]


def test_tiered_fills_memory_from_redis_hits(redis_server: RedisProcess) -> None:
    far = RedisCache(redis_server.url)
    far.put_many([(key("a"), vec(1))])
    far.flush(5)
    near = MemoryCache(1 << 20)
    TieredCache(near, far).get_many([key("a")], DIM)
    np.testing.assert_array_equal(near.get_many([key("a")], DIM)[0], vec(1))
    far.close()


def test_observer_counts_hits_and_misses() -> None:
    seen: list[tuple[str, int, int]] = []
    cache = MemoryCache(1 << 20, observer=lambda *a: seen.append(a))
    cache.put_many([(key("a"), vec(1))])
    cache.get_many([key("a"), key("b")], DIM)
    assert seen == [("memory", 1, 1)]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("failures", "state"), [(2, "closed"), (3, "open")], ids=["below", "at-threshold"]
)
def test_breaker_opens_at_the_threshold(failures: int, state: str) -> None:
    breaker = CircuitBreaker(threshold=3)
    for _ in range(failures):
        breaker.failure()
    assert breaker.state == state


def test_breaker_probe_is_due_only_after_the_reset_time() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=1, reset_after=1.0, clock=clock)
    breaker.failure()
    due = [breaker.probe_due()]
    clock.now = 1.0
    due.append(breaker.probe_due())
    assert due == [False, True]


def test_breaker_success_closes_and_reports() -> None:
    changes: list[str] = []
    breaker = CircuitBreaker(threshold=1, on_change=changes.append)
    breaker.failure()
    breaker.success()
    assert (breaker.state, changes) == ("closed", ["open", "closed"])


def in_thread(work: Callable[[], T]) -> T:
    """``work``'s result; a call that has not returned after 20 s (redis-py's default
    retries stall about 58 s on a hung server) fails the test instead of hanging it."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result(timeout=20)


def test_a_hung_redis_reads_as_misses_then_the_breaker_skips_it(redis_server: RedisProcess) -> None:
    cache = RedisCache(redis_server.url, timeout=0.05, breaker_threshold=2, breaker_reset=60)
    mget = cache._client.mget
    calls: list[object] = []
    cache._client.mget = lambda *a, **kw: calls.append(a) or mget(*a, **kw)  # type: ignore[method-assign]
    os.kill(redis_server.proc.pid, signal.SIGSTOP)
    try:
        got = in_thread(lambda: [cache.get_many([key("a")], DIM) for _ in range(5)])
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    assert (got, cache.breaker.state, len(calls)) == ([[None]] * 5, "open", 2)
    cache.close()


def test_breaker_closes_when_redis_comes_back(tmp_path: Path) -> None:
    redis = start_redis(tmp_path)
    cache = RedisCache(redis.url, timeout=0.05, breaker_threshold=1, breaker_reset=0.1)
    redis.stop()
    cache.get_many([key("a")], DIM)
    opened = cache.breaker.state
    redis = start_redis(tmp_path, port=redis.port)
    deadline = time.monotonic() + 10
    while cache.breaker.state != "closed" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (opened, cache.breaker.state) == ("open", "closed")
    cache.close()
    redis.stop()


def test_writes_while_open_are_dropped_and_counted(redis_server: RedisProcess) -> None:
    dropped: list[int] = []
    cache = RedisCache(
        redis_server.url, breaker_threshold=1, breaker_reset=60, on_drop=dropped.append
    )
    cache.breaker.failure()
    cache.put_many([(key("a"), vec(1)), (key("b"), vec(2))])
    assert dropped == [2]
    cache.close()


def test_put_drops_instead_of_waiting_on_a_hung_redis(redis_server: RedisProcess) -> None:
    dropped: list[int] = []
    cache = RedisCache(redis_server.url, timeout=0.05, write_queue=2, on_drop=dropped.append)
    os.kill(redis_server.proc.pid, signal.SIGSTOP)
    try:
        in_thread(lambda: [cache.put_many([(key(str(i)), vec(i))]) for i in range(50)])
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    assert 0 < sum(dropped) <= 50  # a full queue drops the write, never waits for room
    cache.close()


def test_a_vector_of_another_width_misses(cache: EmbeddingCache) -> None:
    cache.put_many([(key("a"), vec(1))])
    cache.flush(5)
    assert cache.get_many([key("a")], DIM * 2) == [None]


def nan_vector() -> bytes:
    value = vec(1)
    value[3] = np.nan
    return value.tobytes()


BAD_VALUES = {
    "8-bytes": vec(1, 2).tobytes(),
    "4-bytes": vec(1, 1).tobytes(),
    "float64": vec(1).astype(np.float64).tobytes(),
    "nan": nan_vector(),
    "infinity": np.full(DIM, np.inf, dtype=np.float32).tobytes(),
    "empty": b"",
}


@pytest.mark.parametrize("value", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_bad_value_in_redis_is_a_counted_miss(redis_server: RedisProcess, value: bytes) -> None:
    seen: list[tuple[str, int, int]] = []
    cache = RedisCache(redis_server.url, observer=lambda *a: seen.append(a))
    cache.put_many([(key("good"), vec(2))])
    cache.flush(5)
    redis.Redis.from_url(redis_server.url).set(KEY_PREFIX + key("bad"), value)
    got = cache.get_many([key("bad"), key("good")], DIM)
    assert got[0] is None
    np.testing.assert_array_equal(got[1], vec(2))
    assert seen == [("redis", 1, 1)]
    cache.close()


def test_bad_values_are_logged_once_a_minute(
    redis_server: RedisProcess, caplog: pytest.LogCaptureFixture
) -> None:
    cache = RedisCache(redis_server.url)
    redis.Redis.from_url(redis_server.url).set(KEY_PREFIX + key("bad"), b"\x00" * 8)
    with caplog.at_level(logging.WARNING, logger="tool_selector.redis"):
        for _ in range(3):
            cache.get_many([key("bad")], DIM)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    assert "1 cached value(s) were not 8 finite float32s (32 bytes)" in lines[0]
    cache.close()


def test_throttle_says_when_to_log_and_how_many_since() -> None:
    clock = FakeClock()
    throttle = Throttle(60, clock)
    said = [throttle.due(), throttle.due(2)]
    clock.now = 60.0
    said += [throttle.due()]
    assert said == [1, 0, 3]


def test_a_catalog_with_bad_vectors_in_redis_is_re_embedded_and_overwritten(
    redis_server: RedisProcess,
) -> None:
    """8-byte values under every tool's key broke the catalog on every replica (500 in
    ``stack``) until they expired; now they are misses, embedded again and overwritten."""
    encoder = HashingEncoder()
    far = RedisCache(redis_server.url)
    selector = Selector(encoder=encoder, cache=TieredCache(MemoryCache(1 << 20), far))
    keys = selector.entry(ToolSource.of(TOOLS)).entry.keys(encoder.model_id)
    client = redis.Redis.from_url(redis_server.url)
    client.mset({KEY_PREFIX + k: b"\x00" * 8 for k in keys})
    outcome = selector.select(SearchRequest(pattern="post a slack message", tools=TOOLS))
    assert outcome.ranking.names[0] == "send_message"
    assert far.flush(5)
    assert [len(v) for v in client.mget([KEY_PREFIX + k for k in keys])] == [4 * encoder.dim] * 3
    far.close()


def test_the_longest_expiry_the_settings_allow_is_one_redis_takes(
    redis_server: RedisProcess,
) -> None:
    cache = RedisCache(redis_server.url, ttl_seconds=REDIS_MAX_TTL)
    cache.put_many([(key("a"), vec(1))])
    assert cache.flush(5)
    assert redis.Redis.from_url(redis_server.url).ttl(KEY_PREFIX + key("a")) > 0
    cache.close()


def test_writes_a_full_redis_refuses_are_logged_once_a_minute_with_its_words(
    redis_server: RedisProcess, caplog: pytest.LogCaptureFixture
) -> None:
    redis.Redis.from_url(redis_server.url).config_set("maxmemory", 1)  # noeviction: OOM
    dropped: list[int] = []
    cache = RedisCache(redis_server.url, breaker_threshold=100, on_drop=dropped.append)
    with caplog.at_level(logging.WARNING, logger="tool_selector.redis"):
        for i in range(3):
            cache.put_many([(key(str(i)), vec(i))])
            assert cache.flush(5)
    lines = [r.getMessage() for r in caplog.records]
    assert dropped == [1, 1, 1]
    assert len(lines) == 1
    assert "1 write batch(es) of embeddings dropped" in lines[0]
    assert "command not allowed when used memory > 'maxmemory'" in lines[0]
    cache.close()


def test_a_full_redis_still_serves_its_reads(redis_server: RedisProcess) -> None:
    """Writes a full Redis refuses (it answers: it is reachable) opened the breaker, which
    then skipped the reads too: every vector it held was lost to the replicas until a probe."""
    client = redis.Redis.from_url(redis_server.url)
    cache = RedisCache(redis_server.url, breaker_threshold=3)
    cache.put_many([(key("held"), vec(7))])
    assert cache.flush(5)
    client.config_set("maxmemory", 1)  # noeviction: every write refused from here
    for i in range(6):
        cache.put_many([(key(str(i)), vec(i))])
        assert cache.flush(5)
    assert cache.breaker.state == "closed"
    (found,) = cache.get_many([key("held")], DIM)
    assert found is not None
    cache.close()
