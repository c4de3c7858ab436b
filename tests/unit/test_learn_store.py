"""One contract for every learning store (``learning.store``): the in-memory reference, the
folder and a real Redis process, as Litestar tests its stores over one fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.support import RedisProcess, start_redis
from tool_selector.learning.dir_store import DirStore
from tool_selector.learning.records import Called, Shown
from tool_selector.learning.redis_store import RedisStore
from tool_selector.learning.store import Bounds, LearnStore, MemoryStore

BOUNDS = Bounds(ttl=3600, max_searches=50, max_events=20)
VECTOR = np.ones(4, np.float32).tobytes()


def shown(i: int, scope: str = "s", at: float = 1_000.0) -> Shown:
    return Shown(f"{i:032x}", scope, "proxy", at, VECTOR, (1, 2), ("a", "b"), ("get_a", "get_b"))


def called(i: int) -> Called:
    return Called(shown(i), ("a",))


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
        store.add("s", called(i))
    records = store.events("s")[1]
    assert BOUNDS.max_events <= len(records) <= BOUNDS.max_events + 15
    assert records[-1] == called(BOUNDS.max_events + 14)


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
