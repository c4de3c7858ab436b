"""One contract for every embedding cache (memory, redis, none, tiered), then each tier's own
behaviour. The Redis cases run against a real redis-server on a free port."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from tests.support import RedisProcess, start_redis
from tool_selector.embeddings.breaker import CircuitBreaker
from tool_selector.embeddings.cache import (
    EmbeddingCache,
    MemoryCache,
    NullCache,
    TieredCache,
    embedding_key,
)
from tool_selector.embeddings.redis_cache import RedisCache

T = TypeVar("T")


def vec(seed: int, dim: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


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
    assert cache.get_many([key("a"), key("b")]) == [None, None]


def test_empty_lookup_is_empty(cache: EmbeddingCache) -> None:
    assert cache.get_many([]) == []


def test_stored_vectors_come_back_in_key_order(cache: EmbeddingCache) -> None:
    cache.put_many([(key("a"), vec(1)), (key("b"), vec(2))])
    assert cache.flush(5)
    got = cache.get_many([key("b"), key("missing"), key("a")])
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
    got = cache.get_many([key("a")])[0]
    assert got is None if not stores(cache) else np.array_equal(got, vec(2))


def test_vectors_are_float32(cache: EmbeddingCache) -> None:
    cache.put_many([(key("a"), vec(1).astype(np.float64))])  # type: ignore[list-item]
    cache.flush(5)
    got = cache.get_many([key("a")])[0]
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
    cache.get_many([key("a")])
    cache.put_many([(key("c"), vec(3))])
    assert [v is not None for v in cache.get_many([key("a"), key("b"), key("c")])] == [
        True,
        False,
        True,
    ]


def test_tiered_fills_memory_from_redis_hits(redis_server: RedisProcess) -> None:
    far = RedisCache(redis_server.url)
    far.put_many([(key("a"), vec(1))])
    far.flush(5)
    near = MemoryCache(1 << 20)
    TieredCache(near, far).get_many([key("a")])
    np.testing.assert_array_equal(near.get_many([key("a")])[0], vec(1))
    far.close()


def test_observer_counts_hits_and_misses() -> None:
    seen: list[tuple[str, int, int]] = []
    cache = MemoryCache(1 << 20, observer=lambda *a: seen.append(a))
    cache.put_many([(key("a"), vec(1))])
    cache.get_many([key("a"), key("b")])
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
        got = in_thread(lambda: [cache.get_many([key("a")]) for _ in range(5)])
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    assert (got, cache.breaker.state, len(calls)) == ([[None]] * 5, "open", 2)
    cache.close()


def test_breaker_closes_when_redis_comes_back(tmp_path: Path) -> None:
    redis = start_redis(tmp_path)
    cache = RedisCache(redis.url, timeout=0.05, breaker_threshold=1, breaker_reset=0.1)
    redis.stop()
    cache.get_many([key("a")])
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
