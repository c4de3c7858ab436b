"""One contract for every learning store (``learning.store``): the in-memory reference, the
folder and a real Redis process, as Litestar tests its stores over one fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from redis import Redis

from tests.support import RedisProcess, start_redis
from tool_selector.learning import dir_store
from tool_selector.learning.dir_store import DirStore
from tool_selector.learning.records import Called, Shown
from tool_selector.learning.redis_store import RedisStore
from tool_selector.learning.store import Bounds, LearnStore, MemoryStore

BOUNDS = Bounds(ttl=3600, max_searches=50, max_events=20, per_caller=10)
VECTOR = np.ones(4, np.float32).tobytes()


def shown(i: int, scope: str = "s", at: float = 1_000.0, caller: str = "proxy") -> Shown:
    return Shown(f"{i:032x}", scope, caller, at, VECTOR, (1, 2), ("a", "b"), ("get_a", "get_b"))


def called(i: int, caller: str = "proxy") -> Called:
    return Called(shown(i, caller=caller), ("a",))


@pytest.fixture(params=["memory", "dir", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LearnStore]:
    kind = request.param
    redis: RedisProcess | None = None
    made: LearnStore
    if kind == "memory":
        made = MemoryStore(BOUNDS, clock=lambda: 1_000.0)
    elif kind == "dir":
        made = DirStore(tmp_path / "learn", BOUNDS, clock=lambda: 1_000.0)
    else:
        redis = start_redis(tmp_path)
        made = RedisStore(redis.url, BOUNDS)
    yield made
    made.close()
    if redis is not None:
        redis.stop()


def test_a_remembered_search_is_recalled(store: LearnStore) -> None:
    store.remember(shown(1))
    assert store.recall(f"{1:032x}") == shown(1)
    assert store.recall(f"{2:032x}") is None


def test_a_search_is_claimed_once(store: LearnStore) -> None:
    assert store.claim(f"{1:032x}")
    assert not store.claim(f"{1:032x}")


def test_a_released_claim_is_taken_again(store: LearnStore) -> None:
    assert store.claim(f"{1:032x}")
    store.release(f"{1:032x}")
    assert store.claim(f"{1:032x}")
    assert not store.claim(f"{1:032x}")


def test_feedback_is_kept_per_scope_and_changes_the_version(store: LearnStore) -> None:
    before, none = store.events("s")
    store.add("s", called(1))
    after, records = store.events("s")
    assert list(none) == []
    assert list(records) == [called(1)]
    assert after != before
    assert store.events("t")[1] == ()
    assert store.scopes() == ["s"]


def test_a_scope_keeps_its_newest_records(store: LearnStore) -> None:
    for i in range(BOUNDS.max_events + 15):
        store.add("s", called(i, caller=f"c{i}"))
    records = store.events("s")[1]
    assert records == tuple(called(i, caller=f"c{i}") for i in range(15, BOUNDS.max_events + 15))


def test_a_caller_flooding_a_scope_pushes_out_its_own_records_only(store: LearnStore) -> None:
    honest = [called(i, caller=f"honest{i}") for i in range(5)]
    for record in honest:
        store.add("s", record)
    for i in range(100, 100 + 5 * BOUNDS.max_events):
        store.add("s", called(i, caller="flood"))
    records = store.events("s")[1]
    flood = [
        called(i, caller="flood")
        for i in range(100 + 4 * BOUNDS.max_events, 100 + 5 * BOUNDS.max_events)
    ]
    assert records == (*honest, *flood[-BOUNDS.per_caller :])


def test_forgetting_a_scope_drops_its_feedback(store: LearnStore) -> None:
    store.add("s", called(1))
    store.add("t", called(2))
    version = store.events("s")[0]
    store.forget("s")
    assert store.events("s")[1] == ()
    assert store.events("s")[0] != version
    assert store.events("t")[1] == (called(2),)
    assert store.scopes() == ["t"]


def test_the_folder_keeps_everything_across_a_restart(tmp_path: Path) -> None:
    first = DirStore(tmp_path, BOUNDS, clock=lambda: 1_000.0)
    first.remember(shown(1))
    assert first.claim(f"{1:032x}")
    first.add("s", called(1))
    first.close()
    again = DirStore(tmp_path, BOUNDS, clock=lambda: 1_000.0)
    try:
        assert again.recall(f"{1:032x}") == shown(1)
        assert again.events("s")[1] == (called(1),)
        assert not again.claim(f"{1:032x}")  # its feedback was kept: a repeat moves nothing
    finally:
        again.close()


def test_a_record_cut_by_a_crash_is_skipped(tmp_path: Path) -> None:
    first = DirStore(tmp_path, BOUNDS, clock=lambda: 1_000.0)
    first.add("s", called(1))
    first.add("s", called(2))
    first.close()
    (path,) = (tmp_path / "scopes").glob("*.bin")
    path.write_bytes(path.read_bytes()[:-3])
    again = DirStore(tmp_path, BOUNDS)
    try:
        assert again.events("s")[1] == (called(1),)
    finally:
        again.close()


def test_two_replicas_share_a_redis(tmp_path: Path) -> None:
    redis = start_redis(tmp_path)
    try:
        one, two = RedisStore(redis.url, BOUNDS), RedisStore(redis.url, BOUNDS)
        one.remember(shown(1))
        assert two.recall(f"{1:032x}") == shown(1)
        assert two.events("s")[1] == ()
        one.add("s", called(1))
        assert two.events("s")[1] == (called(1),)
        one.forget("s")
        assert two.events("s")[1] == ()
    finally:
        redis.stop()


def test_a_replica_drops_what_another_s_flood_pushed_out(tmp_path: Path) -> None:
    redis = start_redis(tmp_path)
    try:
        one, two = RedisStore(redis.url, BOUNDS), RedisStore(redis.url, BOUNDS)
        first = [called(i, caller="flood") for i in range(BOUNDS.per_caller)]
        for record in first:
            one.add("s", record)
        assert two.events("s")[1] == tuple(first)  # read before the rest came
        later = [called(i, caller="flood") for i in range(100, 103)]
        for record in later:
            one.add("s", record)
        assert two.events("s")[1] == (*first[3:], *later)
        assert two.events("s")[1] == RedisStore(redis.url, BOUNDS).events("s")[1]
        one.forget("s")
        assert not Redis.from_url(redis.url).keys("tool-selector:learn:ids:*")
    finally:
        redis.stop()


def test_the_learning_redis_keeps_feedback_when_it_is_killed(tmp_path: Path) -> None:
    """The learning Redis as deployed (append-only file, no eviction), killed with SIGKILL
    and started again on its folder: the feedback is still there."""
    redis = start_redis(tmp_path, persistent=True)
    port = redis.port
    try:
        RedisStore(redis.url, BOUNDS).add("s", called(1))
    finally:
        redis.stop()  # SIGKILL: no shutdown save
    again = start_redis(tmp_path, port, persistent=True)
    try:
        assert RedisStore(again.url, BOUNDS).events("s")[1] == (called(1),)
    finally:
        again.stop()


def test_the_searches_file_stays_near_what_the_search_ttl_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches past their TTL leave the file at its next rewrite, long before it holds
    twice ``max_searches``; the ones still within it are there after a restart."""
    monkeypatch.setattr(dir_store, "REWRITE_FLOOR", 4)
    now = [1_000.0]
    bounds = Bounds(ttl=10, max_searches=10_000, max_events=20)
    store = DirStore(tmp_path, bounds, clock=lambda: now[0])
    for i in range(200):
        now[0] = 1_000.0 + i  # one search a second: ten within the TTL
        store.remember(shown(i, at=now[0]))
    on_disk = sum(1 for _ in dir_store._records(tmp_path / "searches.bin"))
    assert on_disk <= 2 * 11
    again = DirStore(tmp_path, bounds, clock=lambda: now[0])
    assert again.recall(f"{199:032x}") == shown(199, at=1_199.0)
    assert again.recall(f"{150:032x}") is None
