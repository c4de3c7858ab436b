"""One contract for every learning store (``learning.store``): the in-memory reference, the
folder and a real Redis process, as Litestar tests its stores over one fixture."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from redis import Redis

from tests.support import RedisProcess, start_redis
from tool_selector.embeddings.breaker import CircuitBreaker
from tool_selector.errors import LearningUnavailable
from tool_selector.learning import dir_store, records, redis_store
from tool_selector.learning.dir_store import DirStore
from tool_selector.learning.records import ENCODE, SHOWN, Called, Shown
from tool_selector.learning.redis_store import RedisStore
from tool_selector.learning.redis_store import _ids as redis_ids
from tool_selector.learning.store import Bounds, LearnStore, MemoryStore, OnDrop

T = TypeVar("T")
BOUNDS = Bounds(ttl=3600, max_searches=50, max_events=20, per_caller=10)
VECTOR = np.ones(4, np.float32).tobytes()


def shown(i: int, scope: str = "s", at: float = 1_000.0, caller: str = "proxy") -> Shown:
    return Shown(f"{i:032x}", scope, caller, at, VECTOR, (1, 2), ("a", "b"), ("get_a", "get_b"))


def called(i: int, caller: str = "proxy") -> Called:
    return Called(shown(i, caller=caller), ("a",))


@contextlib.contextmanager
def made(kind: str, tmp_path: Path, bounds: Bounds, told: OnDrop | None) -> Iterator[LearnStore]:
    """A store of ``kind`` (memory, dir, or redis: a throwaway server), closed at the end."""
    redis: RedisProcess | None = None
    store: LearnStore
    if kind == "memory":
        store = MemoryStore(bounds, lambda: 1_000.0, told)
    elif kind == "dir":
        store = DirStore(tmp_path / "learn", bounds, lambda: 1_000.0, told)
    else:
        redis = start_redis(tmp_path)
        store = RedisStore(redis.url, bounds, on_drop=told)
    try:
        yield store
    finally:
        store.close()
        if redis is not None:
            redis.stop()


@pytest.fixture(params=["memory", "dir", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LearnStore]:
    with made(request.param, tmp_path, BOUNDS, None) as one:
        yield one


Opened = Callable[[T], T]
#: Room for three scopes of ten records: a fourth, or an eleventh record, drops one.
BOUNDED = Bounds(ttl=3600, max_searches=500, max_events=20, per_caller=10, max_total=30)


class Told(list[str]):
    """The scopes a store said it dropped (its ``on_drop``)."""

    def __call__(self, scope: str) -> None:
        self.append(scope)


@pytest.fixture(params=["memory", "dir", "redis"])
def bounded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LearnStore, Told]]:
    """A store of each kind with ``BOUNDED``'s room for all scopes, and what it told."""
    told = Told()
    with made(request.param, tmp_path, BOUNDED, told) as one:
        yield one, told


def fill(store: LearnStore, scope: str, first: int, count: int) -> list[Called]:
    """``count`` records of distinct callers added to ``scope`` (ids from ``first``)."""
    records = [called(i, caller=f"c{i}") for i in range(first, first + count)]
    for record in records:
        assert store.add(scope, record)
    return records


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A throwaway Redis (``start_redis``), stopped at the test's end."""
    proc = start_redis(tmp_path)
    yield proc
    proc.stop()


@pytest.fixture
def opened() -> Iterator[Opened[Any]]:
    """Closes at the test's end what it is given (a Redis client holds sockets)."""
    with contextlib.ExitStack() as stack:

        def keep(thing: T) -> T:
            stack.callback(thing.close)  # type: ignore[attr-defined]
            return thing

        yield keep


def test_a_remembered_search_is_recalled(store: LearnStore) -> None:
    store.remember(shown(1))
    assert store.recall(f"{1:032x}") == shown(1)
    assert store.recall(f"{2:032x}") is None


def test_a_search_s_feedback_is_kept_once(store: LearnStore) -> None:
    assert not store.claimed(f"{1:032x}")
    assert store.add("s", called(1))
    assert store.claimed(f"{1:032x}")
    assert not store.claimed(f"{2:032x}")
    assert not store.add("s", Called(shown(1), ("b",)))
    assert store.events("s")[1] == (called(1),)


def test_a_write_the_folder_refuses_claims_nothing(tmp_path: Path) -> None:
    store = DirStore(tmp_path, BOUNDS, clock=lambda: 1_000.0)
    store._path("s").mkdir()  # where the scope's file goes: appending to it fails
    with pytest.raises(LearningUnavailable):
        store.add("s", called(1))
    store._path("s").rmdir()
    assert store.add("s", called(1))
    assert store.events("s")[1] == (called(1),)


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


def test_a_caller_s_newest_records_in_a_scope_are_at_hand(store: LearnStore) -> None:
    mine = [called(i, caller="me") for i in range(6)]
    for n, record in enumerate(mine):
        store.add("s", record)
        store.add("s", called(100 + n, caller="other"))
    store.add("t", called(200, caller="me"))
    assert tuple(store.recent("s", "me", 3)) == tuple(mine[-3:])
    assert tuple(store.recent("s", "me", 50)) == tuple(mine)
    assert tuple(store.recent("s", "nobody", 3)) == ()
    assert tuple(store.recent("u", "me", 3)) == ()


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
    assert first.add("s", called(1))
    first.close()
    again = DirStore(tmp_path, BOUNDS, clock=lambda: 1_000.0)
    try:
        assert again.recall(f"{1:032x}") == shown(1)
        assert again.events("s")[1] == (called(1),)
        assert not again.add("s", called(1))  # its feedback was kept: a repeat moves nothing
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


def test_two_replicas_share_a_redis(redis: RedisProcess, opened: Opened[Any]) -> None:
    one, two = opened(RedisStore(redis.url, BOUNDS)), opened(RedisStore(redis.url, BOUNDS))
    one.remember(shown(1))
    assert two.recall(f"{1:032x}") == shown(1)
    assert two.events("s")[1] == ()
    one.add("s", called(1))
    assert two.events("s")[1] == (called(1),)
    one.forget("s")
    assert two.events("s")[1] == ()


def test_a_scope_forgotten_again_after_its_epoch_expired_is_forgotten_everywhere(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    """A scope's epoch key expires 3 hours after a forget; a per-scope count then started
    again from nothing and gave the next forget the epoch a replica reading since the
    first one held: that replica kept the forgotten feedback. (The key is deleted here as
    its expiry would.)"""
    one, two = opened(RedisStore(redis.url, BOUNDS)), opened(RedisStore(redis.url, BOUNDS))
    raw = Redis.from_url(redis.url)
    try:
        one.add("s", called(1))
        one.forget("s")
        one.add("s", called(2))
        assert two.events("s")[1] == (called(2),)
        raw.delete(f"{redis_store.PREFIX}epoch:s")
        one.forget("s")
        assert two.events("s")[1] == ()
        one.add("s", called(3))
        assert two.events("s")[1] == (called(3),)
    finally:
        raw.close()


def test_a_redis_scope_of_many_callers_keeps_only_its_records_ids(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    store = opened(RedisStore(redis.url, BOUNDS))
    for i in range(300):
        store.add("s", called(i, caller=f"c{i}"))
    newest = tuple(called(i, caller=f"c{i}") for i in range(280, 300))
    assert store.events("s")[1] == newest
    client = opened(Redis.from_url(redis.url))
    assert client.xlen("tool-selector:learn:events:s") == BOUNDS.max_events
    assert len(client.keys("tool-selector:learn:ids:*")) == BOUNDS.max_events
    assert client.scard("tool-selector:learn:callers:s") == BOUNDS.max_events


def test_an_error_redis_answers_does_not_open_the_breaker(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    opened(Redis.from_url(redis.url)).set("tool-selector:learn:events:s", b"not a stream")
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, reset_after=5.0, clock=lambda: now[0])
    store = opened(RedisStore(redis.url, BOUNDS, breaker=breaker))
    with pytest.raises(LearningUnavailable, match="WRONGTYPE"):
        store.add("s", called(1))
    assert breaker.state == "closed"
    breaker.failure()  # opened by something else; the probe's answer is an error
    now[0] = 5.0
    with pytest.raises(LearningUnavailable, match="WRONGTYPE"):
        store.add("s", called(2))
    assert breaker.state == "closed"  # Redis answered: it can be reached
    assert store.add("t", called(3))


def test_the_breaker_lets_one_probe_through_each_period() -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, reset_after=5.0, clock=lambda: now[0])
    assert not breaker.try_probe()  # closed: nothing to probe
    breaker.failure()
    assert not breaker.try_probe()
    now[0] = 5.0
    assert [breaker.try_probe() for _ in range(3)] == [True, False, False]
    now[0] = 10.0
    assert breaker.try_probe()


def test_of_many_threads_asking_at_once_one_probes() -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, reset_after=5.0, clock=lambda: now[0])
    breaker.failure()
    now[0] = 5.0
    start = threading.Barrier(16)

    def ask() -> bool:
        start.wait()
        return breaker.try_probe()

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: ask(), range(16)))
    assert answers.count(True) == 1


def test_entries_written_before_the_callers_ids_were_kept_age_out(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    client = opened(Redis.from_url(redis.url))
    for i in range(5):  # as the store wrote them before: the record alone
        client.xadd("tool-selector:learn:events:s", {"r": ENCODE(called(i, caller=f"old{i}"))})
    store = opened(RedisStore(redis.url, BOUNDS))
    for i in range(100, 100 + BOUNDS.max_events):
        assert store.add("s", called(i, caller=f"c{i}"))
    newest = tuple(called(i, caller=f"c{i}") for i in range(100, 100 + BOUNDS.max_events))
    assert store.events("s")[1] == newest


def test_a_redis_entry_that_does_not_decode_is_skipped(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    """A record of another version (or written by hand) fails no search nor feedback: the
    scope's reading, the caller's newest and the search's recall skip it (they raised)."""
    client = opened(Redis.from_url(redis.url))
    store = opened(RedisStore(redis.url, BOUNDS))
    assert store.add("s", called(1))
    for fields in ({"r": b"\xc1 not msgpack"}, {"x": ENCODE(called(2))}):
        bad = client.xadd("tool-selector:learn:events:s", fields)
        client.rpush(redis_ids("s", "proxy"), bad)
    assert store.add("s", called(3))
    assert store.events("s")[1] == (called(1), called(3))
    assert opened(RedisStore(redis.url, BOUNDS)).events("s")[1] == (called(1), called(3))
    assert list(store.recent("s", "proxy", 10)) == [called(1), called(3)]
    client.set(f"tool-selector:learn:search:{4:032x}", b"\xc1")
    assert store.recall(f"{4:032x}") is None


def test_a_store_emptied_is_forgotten_by_every_replica(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    """Deleting the keys (docs/learning.md's way to forget everything) or a Redis restarted
    without its data left every replica answering from what it had read: an absent epoch
    read as 0, a reading's own; and a forget after the restart drew epoch 1 again, one a
    replica had read. The store's generation tells them apart."""
    client = opened(Redis.from_url(redis.url))
    one, two = opened(RedisStore(redis.url, BOUNDS)), opened(RedisStore(redis.url, BOUNDS))
    one.add("s", called(1))
    assert two.events("s")[1] == (called(1),)
    client.flushall()  # the keys deleted
    assert two.events("s")[1] == ()
    one.forget("t")
    one.add("t", called(2))
    assert two.events("t")[1] == (called(2),)  # read at epoch 1
    client.flushall()  # a restart without the data: the epochs counted from nothing again
    one.forget("t")  # epoch 1 again
    assert two.events("t")[1] == ()


def test_a_replica_drops_what_another_s_flood_pushed_out(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    one, two = opened(RedisStore(redis.url, BOUNDS)), opened(RedisStore(redis.url, BOUNDS))
    first = [called(i, caller="flood") for i in range(BOUNDS.per_caller)]
    for record in first:
        one.add("s", record)
    assert two.events("s")[1] == tuple(first)  # read before the rest came
    later = [called(i, caller="flood") for i in range(100, 103)]
    for record in later:
        one.add("s", record)
    assert two.events("s")[1] == (*first[3:], *later)
    assert two.events("s")[1] == opened(RedisStore(redis.url, BOUNDS)).events("s")[1]
    one.forget("s")
    assert not opened(Redis.from_url(redis.url)).keys("tool-selector:learn:ids:*")


def test_the_learning_redis_keeps_feedback_when_it_is_killed(
    tmp_path: Path, opened: Opened[Any]
) -> None:
    """The learning Redis as deployed (append-only file, no eviction), killed with SIGKILL
    and started again on its folder: the feedback is still there."""
    redis = start_redis(tmp_path, persistent=True)
    port = redis.port
    try:
        opened(RedisStore(redis.url, BOUNDS)).add("s", called(1))
    finally:
        redis.stop()  # SIGKILL: no shutdown save
    again = start_redis(tmp_path, port, persistent=True)
    try:
        assert opened(RedisStore(again.url, BOUNDS)).events("s")[1] == (called(1),)
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
    store = DirStore(tmp_path, bounds, clock=lambda: now[0], rewrite=at_once)
    for i in range(200):
        now[0] = 1_000.0 + i  # one search a second: ten within the TTL
        store.remember(shown(i, at=now[0]))
    on_disk = sum(1 for _ in dir_store._records(tmp_path / "searches.bin"))
    assert on_disk <= 2 * 11
    again = DirStore(tmp_path, bounds, clock=lambda: now[0])
    assert again.recall(f"{199:032x}") == shown(199, at=1_199.0)
    assert again._memory.kept() == 11  # the searches at 1,189 to 1,199 s


def at_once(job: Callable[[], None]) -> None:
    """``DirStore``'s rewrite of ``searches.bin`` run in the search that made it due."""
    job()


TEN_SECONDS = Bounds(ttl=10, max_searches=10_000, max_events=20)


def rewrites_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> tuple[DirStore, list[float], list[Callable[[], None]]]:
    """A folder store (searches kept ten seconds, rewritten from 4 on) that holds its
    rewrites of ``searches.bin`` instead of running them, after ``count`` searches a second."""
    monkeypatch.setattr(dir_store, "REWRITE_FLOOR", 4)
    now = [1_000.0]
    held: list[Callable[[], None]] = []
    store = DirStore(tmp_path, TEN_SECONDS, clock=lambda: now[0], rewrite=held.append)
    for i in range(count):
        now[0] = 1_000.0 + i
        store.remember(shown(i, at=now[0]))
    return store, now, held


def test_the_searches_file_is_rewritten_beside_the_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search that makes the rewrite due hands it over and goes on; searches remembered
    while it writes land in the old file and in the new one; a restart finds them all."""
    store, now, held = rewrites_held(tmp_path, monkeypatch, 40)
    assert len(held) == 1  # due once, handed over, not run: the searches went on
    on_disk = sum(1 for _ in dir_store._records(tmp_path / "searches.bin"))
    assert on_disk == 40  # every search appended meanwhile
    held[0]()
    again = DirStore(tmp_path, TEN_SECONDS, clock=lambda: now[0])
    assert sum(1 for _ in dir_store._records(tmp_path / "searches.bin")) < 40
    assert again._memory.kept() == 11  # the searches at 1,029 to 1,039 s, three of them
    assert again.recall(f"{39:032x}") == shown(39, at=1_039.0)  # remembered after the snapshot
    for i in range(40, 48):  # due again: the next rewrite is handed over
        now[0] = 1_000.0 + i
        store.remember(shown(i, at=now[0]))
    assert len(held) == 2


def full(fd: int) -> None:
    raise OSError(28, "No space left on device")


def no_encoding(record: object) -> bytes:
    raise ValueError("cannot encode")


@pytest.mark.parametrize(
    ("patched", "logged"),
    [
        (("os", "fsync", full), "searches.bin not rewritten: No space left on device"),
        (("", "ENCODE", no_encoding), "searches.bin not rewritten: ValueError('cannot encode')"),
    ],
)
def test_a_failed_rewrite_keeps_the_old_file_and_waits(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    patched: tuple[str, str, Callable[..., Any]],
    logged: str,
) -> None:
    """A disk full or any other failure: the old file stays whole, the new one goes, nothing
    is left pending, and the next try comes after as many searches again."""
    store, now, held = rewrites_held(tmp_path, monkeypatch, 30)
    where, name, failing = patched
    with monkeypatch.context() as broken:
        broken.setattr(getattr(dir_store, where) if where else dir_store, name, failing)
        held[0]()
    assert logged in caplog.text
    assert sum(1 for _ in dir_store._records(tmp_path / "searches.bin")) == 30
    assert not (tmp_path / "searches.tmp").exists()
    for i in range(30, 40):  # fewer than the kept searches again: no new try yet
        now[0] = 1_000.0 + i
        store.remember(shown(i, at=now[0]))
    assert len(held) == 1
    again = DirStore(tmp_path, TEN_SECONDS, clock=lambda: now[0])
    assert again.recall(f"{39:032x}") == shown(39, at=1_039.0)
    for i in range(40, 46):
        now[0] = 1_000.0 + i
        store.remember(shown(i, at=now[0]))
    assert len(held) == 2  # nothing was left pending: due again, handed over again


def test_a_rewrite_that_cannot_start_leaves_nothing_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(dir_store, "REWRITE_FLOOR", 4)
    now, tries = [1_000.0], []

    def no_thread(job: Callable[[], None]) -> None:
        tries.append(job)
        raise RuntimeError("can't start new thread")

    store = DirStore(tmp_path, TEN_SECONDS, clock=lambda: now[0], rewrite=no_thread)
    for i in range(60):  # each search remembered all the same
        now[0] = 1_000.0 + i
        store.remember(shown(i, at=now[0]))
    assert "searches.bin rewrite not started" in caplog.text
    assert 1 < len(tries) < 6  # tried again after as many searches, not at every search
    assert store._pending is None
    assert sum(1 for _ in dir_store._records(tmp_path / "searches.bin")) == 60


def test_a_rewrite_finishing_after_close_renames_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another store may own the folder once this one is closed (a restart in one process):
    the late rewrite leaves its file alone."""
    store, _, held = rewrites_held(tmp_path, monkeypatch, 30)
    store.close()
    held[0]()
    assert sum(1 for _ in dir_store._records(tmp_path / "searches.bin")) == 30
    assert not (tmp_path / "searches.tmp").exists()


class Calls:
    """Counts the calls that reach a redis-py client method."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method, self.count = method, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.count += 1
        return self.method(*args, **kwargs)


def test_a_hung_learning_redis_is_asked_once_until_its_probe(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    """SIGSTOP: the first call times out and opens the breaker; searches after it are not
    remembered and their scopes read as last read without asking Redis, feedback is 503 at
    once; after ``reset_after`` one call probes, and with Redis back it closes."""
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, reset_after=5.0, clock=lambda: now[0])
    store = opened(RedisStore(redis.url, BOUNDS, timeout=0.2, breaker=breaker))
    try:
        store.add("s", called(1))
        assert store.events("s")[1] == (called(1),)
        os.kill(redis.proc.pid, signal.SIGSTOP)
        store.remember(shown(2))  # times out: the breaker opens
        assert breaker.state == "open"
        sent = Calls(store._client.execute_command)
        store._client.execute_command = sent  # type: ignore[method-assign]
        for i in range(3, 8):
            store.remember(shown(i))
            assert store.events("s")[1] == (called(1),)
        with pytest.raises(LearningUnavailable):
            store.add("s", called(3))
        assert sent.count == 0  # not one command reached Redis
        os.kill(redis.proc.pid, signal.SIGCONT)
        now[0] = 5.0
        store.remember(shown(9))  # the probe
        assert (breaker.state, sent.count) == ("closed", 1)
        assert store.recall(f"{9:032x}") == shown(9)
    finally:
        os.kill(redis.proc.pid, signal.SIGCONT)


def test_past_the_total_the_scope_fed_least_recently_is_dropped_whole(
    bounded: tuple[LearnStore, Told],
) -> None:
    store, told = bounded
    a, b, c = fill(store, "a", 0, 10), fill(store, "b", 100, 10), fill(store, "c", 200, 10)
    assert (store.scopes(), told) == (["a", "b", "c"], [])  # 30: all fit
    version = store.events("b")[0]
    more = fill(store, "a", 300, 1)  # "a" fed last now: "b" is the least recently fed
    assert told == ["b"]
    assert store.scopes() == ["a", "c"]
    assert store.events("b")[1] == ()
    assert store.events("b")[0] != version
    assert store.events("a")[1] == (*a, *more)
    assert store.events("c")[1] == tuple(c)
    assert not store.add("b", b[0])  # as after a forget: its searches keep their claims
    d = fill(store, "d", 400, 20)  # one full scope pushes out all the others
    assert (store.scopes(), told) == (["d"], ["b", "c", "a"])
    assert store.events("d")[1] == tuple(d)


def test_the_scope_just_fed_is_never_dropped(bounded: tuple[LearnStore, Told]) -> None:
    store, told = bounded
    fill(store, "a", 0, 15)
    big = fill(store, "b", 100, 20) + fill(store, "b", 200, 20)
    assert told == ["a"]  # at b's 16th record: "b" alone then, full, past it too
    assert store.scopes() == ["b"]
    assert store.events("b")[1] == tuple(big[-20:])


def test_a_folder_lowered_below_what_it_holds_drops_as_memory_would(tmp_path: Path) -> None:
    first, memory = DirStore(tmp_path, BOUNDS), MemoryStore(BOUNDS)
    for store in (first, memory):  # fed back to back, a few ms apart at most
        fill(store, "a", 0, 10)
        fill(store, "b", 100, 10)
        fill(store, "c", 200, 10)
        fill(store, "a", 300, 1)  # "b" is now the least recently fed
    first.close()
    told, lower = Told(), Bounds(3600, 50, 20, per_caller=10, max_total=21)
    again = DirStore(tmp_path, lower, on_drop=told)
    try:
        assert told == ["b"]
        assert again.scopes() == ["a", "c"]
        assert again.events("a")[1] == memory.events("a")[1]
        assert len(list((tmp_path / "scopes").glob("*.bin"))) == 2
    finally:
        again.close()


def test_a_scope_s_file_stays_near_what_the_scope_keeps(tmp_path: Path) -> None:
    store = DirStore(tmp_path, BOUNDS)
    for i in range(500):  # one caller: its newest per_caller kept, the file rewritten
        store.add("s", called(i, caller="flood"))
    (path,) = (tmp_path / "scopes").glob("*.bin")
    on_disk = len(list(dir_store._records(path))) - 1
    assert len(store.events("s")[1]) == BOUNDS.per_caller
    assert BOUNDS.per_caller <= on_disk <= 1.5 * BOUNDS.per_caller + dir_store.REWRITE_SLACK


def test_a_replica_keeps_its_reading_through_a_long_outage(
    redis: RedisProcess, opened: Opened[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = opened(RedisStore(redis.url, BOUNDS, timeout=0.2))
    fill(store, "s", 0, 5)
    before = store.events("s")
    monkeypatch.setattr(redis_store, "READ_FOR", 0.0)  # every reading too old to keep
    redis.stop()
    assert store.events("s") == before  # the last reading, not nothing
    assert store.events("s") == before  # the breaker open too


def test_what_an_older_replica_forgot_is_not_dropped_nor_counted(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    store = opened(RedisStore(redis.url, BOUNDED, on_drop=(told := Told())))
    fill(store, "a", 0, 10)
    fill(store, "b", 100, 10)
    client = opened(Redis.from_url(redis.url))
    prefix = "tool-selector:learn:"
    for key in client.smembers(prefix + "callers:a"):  # as the older _FORGET did
        client.delete(key)
    client.delete(prefix + "events:a", prefix + "callers:a")
    client.srem(prefix + "scopes", "a")  # "a" still counted in total, and in fed
    c = fill(store, "c", 200, 15)  # 25 really: nothing to drop
    assert told == []
    assert sorted(store.scopes()) == ["b", "c"]
    assert int(client.get(prefix + "total")) == 25
    assert client.zrange(prefix + "fed", 0, -1) == [b"b", b"c"]
    assert store.events("c")[1] == tuple(c)


def test_a_scope_redis_drops_leaves_no_key_and_the_total_right(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    one, two = opened(RedisStore(redis.url, BOUNDED)), opened(RedisStore(redis.url, BOUNDED))
    fill(one, "a", 0, 10)
    fill(one, "b", 100, 10)
    assert len(two.events("a")[1]) == 10  # the other replica has read "a"
    fill(one, "c", 200, 11)
    client = opened(Redis.from_url(redis.url))
    assert client.keys("tool-selector:learn:*:a") == [b"tool-selector:learn:epoch:a"]
    assert 0 < client.ttl("tool-selector:learn:epoch:a") <= redis_store.EPOCH_SECONDS
    assert not any(b"\x00" in k for k in client.keys("tool-selector:learn:ids:*"))
    assert len(client.keys("tool-selector:learn:ids:*")) == 21
    assert int(client.get("tool-selector:learn:total")) == 21
    assert client.zrange("tool-selector:learn:fed", 0, -1) == [b"b", b"c"]
    assert two.events("a")[1] == ()


def test_a_redis_written_before_the_total_was_kept_counts_it_at_the_next_feedback(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    store = opened(RedisStore(redis.url, BOUNDED))
    fill(store, "a", 0, 10)
    fill(store, "b", 100, 10)
    client = opened(Redis.from_url(redis.url))
    client.delete("tool-selector:learn:fed", "tool-selector:learn:total")  # as before
    fill(store, "c", 200, 10)
    assert int(client.get("tool-selector:learn:total")) == 30
    fill(store, "c", 300, 1)  # past the total: "a" or "b" (fed before the count) goes
    assert int(client.get("tool-selector:learn:total")) == 21
    assert len(store.scopes()) == 2
    assert "c" in store.scopes()


def test_what_an_older_replica_fed_is_counted_before_anything_is_dropped(
    redis: RedisProcess, opened: Opened[Any]
) -> None:
    store = opened(RedisStore(redis.url, BOUNDED, on_drop=(told := Told())))
    fill(store, "a", 0, 5)
    client = opened(Redis.from_url(redis.url))
    prefix = "tool-selector:learn:"
    # "b" is scored by its last entry's id, in milliseconds: fed in the millisecond "a" was
    # (a fast machine), it would read as fed before "a" (seen once in 2,740 tests)
    time.sleep(0.005)
    for i in range(100, 110):  # as the older _ADD kept them: no fed, no total
        client.xadd(prefix + "events:b", {"r": ENCODE(called(i, caller=f"c{i}"))})
    client.sadd(prefix + "scopes", "b")
    fill(store, "c", 200, 16)  # 31 really: the least recently fed, "a", goes
    assert told == ["a"]
    assert int(client.get(prefix + "total")) == 26
    assert sorted(store.scopes()) == ["b", "c"]


def test_a_store_far_past_a_lowered_bound_shrinks_a_few_scopes_a_feedback(
    redis: RedisProcess, opened: Opened[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    roomy = opened(RedisStore(redis.url, BOUNDS))
    for n in range(12):
        fill(roomy, f"s{n:02}", 100 * n, 2)
    monkeypatch.setattr(redis_store, "DROPS", 3)
    told = Told()
    lowered = Bounds(3600, 500, 4, per_caller=4, max_total=4)
    store = opened(RedisStore(redis.url, lowered, on_drop=told))
    fill(store, "new", 5000, 1)
    assert told == ["s00", "s01", "s02"]  # not all at once: one script blocks Redis
    fill(store, "new", 5001, 1)
    assert told[3:] == ["s03", "s04", "s05"]
    for i in range(5002, 5010):
        store.add("new", called(i, caller=f"c{i}"))
    assert store.scopes() == ["new"]


def test_the_learning_memory_benchmark_prints_each_size(
    redis: RedisProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    from loadtests import learnmemory  # noqa: PLC0415

    assert learnmemory.main(["--records", "50", "--redis", redis.url]) == 0
    printed = capsys.readouterr().out
    for what in ("record in the store", "record's evidence", "remembered search", "in Redis"):
        assert what in printed
    assert "command: python -m loadtests.learnmemory" in printed
    sizes = [float(line.split(":")[1].split()[0]) for line in printed.splitlines()[:5]]
    assert all(size > 1.0 for size in sizes)  # each holds a 1.5 KB vector at least


def test_remembered_searches_and_feedback_are_not_tracked_by_the_collector() -> None:
    """A replica keeps up to 100,000 searches: the garbage collector must not walk them
    (``gc=False``; nothing in them can form a cycle)."""
    n = len(VECTOR)  # tuples made at run time (constant ones would leave a struct untracked)
    search = Shown("id", "s", "proxy", 1.0, VECTOR, tuple(range(n)), (f"t{n}",), (f"get_{n}",))
    assert not gc.is_tracked(search)
    assert not gc.is_tracked(called(1))
    assert not gc.is_tracked(SHOWN.decode(ENCODE(search)))  # as read back from disk or Redis


@contextlib.contextmanager
def started(tmp_path: Path, bounds: Bounds = BOUNDS) -> Iterator[DirStore]:
    """A folder store started on ``tmp_path`` (as a restart starts it), closed at the end."""
    store = DirStore(tmp_path, bounds, clock=lambda: 1_000.0)
    try:
        yield store
    finally:
        store.close()


@contextlib.contextmanager
def disk_full(*, half_first: bool = False) -> Iterator[None]:
    """``os.write`` failing with ENOSPC; with ``half_first``, its first call writes half of
    its bytes first (a short write, then the disk full)."""
    real, calls = os.write, []

    def write(fd: int, data: Any) -> int:
        calls.append(len(data))
        if half_first and len(calls) == 1:
            return real(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "write", write)
        yield


def test_feedback_after_a_record_cut_by_a_crash_survives_the_next_restart(
    tmp_path: Path,
) -> None:
    """Appends behind a cut record were read, at the next start, as the cut record's rest:
    every feedback acknowledged since was lost (and its search with it). The cut record is
    now cut off the file when it is read."""
    with started(tmp_path) as first:
        for i in (1, 2):
            first.remember(shown(i))
            first.add("s", called(i))
    for path in [tmp_path / "searches.bin", *(tmp_path / "scopes").glob("*.bin")]:
        path.write_bytes(path.read_bytes()[:-3])
    with started(tmp_path) as again:
        for i in (3, 4):
            again.remember(shown(i))
            assert again.add("s", called(i))
    with started(tmp_path) as third:
        assert third.events("s")[1] == (called(1), called(3), called(4))
        assert [third.recall(f"{i:032x}") is not None for i in (1, 3, 4)] == [True, True, True]


def test_a_scope_file_cut_before_its_name_is_written_afresh(tmp_path: Path) -> None:
    with started(tmp_path) as first:
        first.add("s", called(1))
    (path,) = (tmp_path / "scopes").glob("*.bin")
    path.write_bytes(path.read_bytes()[:3])
    with started(tmp_path) as again:
        assert again.add("s", called(2))
    with started(tmp_path) as third:
        assert third.events("s")[1] == (called(2),)


def test_a_scope_file_that_cannot_be_rewritten_keeps_the_feedback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk at the scope file's rewrite raised a bare OSError (a 500) after the
    feedback was kept and claimed; now the rewrite waits and the feedback stands."""
    real = dir_store._write_synced

    def full(f: Any, payloads: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dir_store, "_write_synced", full)
    with started(tmp_path) as store:
        kept = [store.add("s", called(i)) for i in range(40)]
        assert all(kept)
        assert not list((tmp_path / "scopes").glob("*.tmp"))
        monkeypatch.setattr(dir_store, "_write_synced", real)
        assert not store.add("s", called(39))  # claimed: a duplicate
    with started(tmp_path) as again:
        assert again.events("s")[1] == store.events("s")[1]


def test_a_claim_stays_while_its_search_is_remembered() -> None:
    """Claims were trimmed oldest first at ``max_searches`` whatever was still remembered: a
    search fed early could lose its claim to later ones and take a second feedback."""
    store = MemoryStore(Bounds(ttl=3600, max_searches=2, max_events=20), lambda: 1_000.0)
    store.remember(shown(1))
    store.remember(shown(2))
    assert store.add("s", called(2))
    assert store.add("s", called(1))
    store.remember(shown(3))  # search 1 goes: two are remembered at most
    assert store.add("s", called(3))
    assert store.recall(f"{2:032x}") is not None
    assert not store.add("s", called(2))
    assert [e.search.id for e in store.events("s")[1]] == [f"{i:032x}" for i in (2, 1, 3)]


def test_an_append_a_full_disk_cuts_short_is_cut_back_at_once(tmp_path: Path) -> None:
    """A write that stopped part way (ENOSPC after a short write) left its bytes in the file;
    the next feedbacks, acknowledged, landed behind them and were lost at the next start."""
    with started(tmp_path) as store:
        for i in (1, 2, 3):
            store.remember(shown(i))
        assert store.add("s", called(1))
        with disk_full(half_first=True), pytest.raises(LearningUnavailable):
            store.add("s", called(2))
        assert store.add("s", called(3))
    with started(tmp_path) as again:
        assert again.events("s")[1] == (called(1), called(3))


def test_claims_of_searches_fed_newest_first_stay_while_remembered() -> None:
    store = MemoryStore(Bounds(ttl=3600, max_searches=3, max_events=20), lambda: 1_000.0)
    for i in (1, 2, 3):
        store.remember(shown(i))
    for i in (3, 2, 1):
        assert store.add("s", called(i))
    store.remember(shown(4))  # search 1 goes
    assert store.add("s", called(4))
    assert [store.add("s", called(i)) for i in (2, 3, 4)] == [False, False, False]


def test_a_new_scope_whose_first_append_a_full_disk_cut_starts_with_its_name(
    tmp_path: Path,
) -> None:
    with started(tmp_path) as store:
        with disk_full(), pytest.raises(LearningUnavailable):
            store.add("s", called(1))
        assert store.add("s", called(2))
    with started(tmp_path) as again:
        assert again.events("s")[1] == (called(2),)


def test_feedback_is_synced_to_the_disk_before_it_is_acknowledged(tmp_path: Path) -> None:
    """An acknowledged feedback survives a crash of the machine, not only of the process
    (it was written to the page cache only); a search is appended without a sync."""
    real, synced = os.fdatasync, []

    def fdatasync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    with pytest.MonkeyPatch.context() as patch, started(tmp_path) as store:
        patch.setattr(os, "fdatasync", fdatasync)
        store.remember(shown(1))
        assert synced == []
        assert store.add("s", called(1))
        assert [Path(p).parent.name for p in synced] == ["scopes"]


def test_a_sync_that_fails_keeps_nothing(tmp_path: Path) -> None:
    """A failed sync is a 503 (``LearningUnavailable``), its bytes cut back off the file and
    the search unclaimed: the client's retry is taken."""

    def fdatasync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    with started(tmp_path) as store:
        store.remember(shown(1))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "fdatasync", fdatasync)
            with pytest.raises(LearningUnavailable):
                store.add("s", called(1))
        assert not store.claimed(f"{1:032x}")
        assert store.add("s", called(1))
    with started(tmp_path) as again:
        assert again.events("s")[1] == (called(1),)


def test_a_rewrite_a_crash_cut_short_leaves_no_tmp_file(tmp_path: Path) -> None:
    with started(tmp_path) as store:
        store.remember(shown(1))
        store.add("s", called(1))
    cut = [tmp_path / "searches.tmp", tmp_path / "scopes" / "0123456789abcdef.tmp"]
    for path in cut:
        path.write_bytes(b"half a rewrite")
    with started(tmp_path) as again:
        assert again.events("s")[1] == (called(1),)
    assert [path.exists() for path in cut] == [False, False]


def test_every_rewrite_syncs_its_folder_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """searches.bin's rewrite renamed its new file without syncing the folder (a crash of
    the machine could bring the old name back), where the scope files' rewrite synced it."""
    monkeypatch.setattr(dir_store, "REWRITE_FLOOR", 4)
    synced: list[str] = []
    real = dir_store._sync_folder
    monkeypatch.setattr(dir_store, "_sync_folder", lambda f: (synced.append(f.name), real(f)))
    store = DirStore(tmp_path, BOUNDS, clock=lambda: 1_000.0, rewrite=at_once)
    for i in range(2 * BOUNDS.max_searches + 2):  # past twice what it keeps: rewritten
        store.remember(shown(i))
    store.close()
    assert tmp_path.name in synced


def test_records_that_do_not_decode_are_said_once_a_minute(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tool_selector.learning.records"):
        for _ in range(5):
            assert list(records.decoded([b"\xc1", b"\xc1"], SHOWN.decode)) == []
    lines = [r.getMessage() for r in caplog.records if r.name == "tool_selector.learning.records"]
    assert len(lines) <= 1


def _trimmed(store: DirStore) -> None:
    """Search 1's feedback pushed out of its scope and, at a rewrite, off its file."""
    for i in range(2, 40):
        store.remember(shown(i))
        store.add("s", called(i))


def _dropped(store: DirStore) -> None:
    """Scope "s" dropped whole, its file with it: "t" and "u", fed since, fill the room."""
    fill(store, "t", 100, 20)
    fill(store, "u", 200, 10)


@pytest.mark.parametrize(
    "gone",
    [_trimmed, lambda store: store.forget("s"), _dropped],
    ids=["trimmed", "forgotten", "dropped"],
)
def test_a_claim_outlives_its_record_across_a_restart(
    tmp_path: Path, gone: Callable[[DirStore], None]
) -> None:
    """Claims were rebuilt at start from the records kept alone: a search whose feedback was
    trimmed, forgotten or dropped took a second feedback after a restart, while it was still
    remembered (as it does not in memory, nor in Redis, whose claims live the search TTL)."""
    with started(tmp_path, BOUNDED) as first:
        first.remember(shown(1))
        assert first.add("s", called(1))
        gone(first)
        assert called(1) not in first.events("s")[1]
        assert not first.add("s", called(1))
    with started(tmp_path, BOUNDED) as again:
        assert again.recall(f"{1:032x}") is not None
        assert again.claimed(f"{1:032x}")
        assert not again.add("s", called(1))


def test_a_folder_kept_before_its_claims_file_keeps_its_claims(tmp_path: Path) -> None:
    """A folder an older version wrote has no ``claims.bin``: its records' claims are written
    there at start, before a rewrite can cut the records."""
    with started(tmp_path, BOUNDED) as first:
        first.remember(shown(1))
        assert first.add("s", called(1))
    (tmp_path / "claims.bin").unlink()
    with started(tmp_path, BOUNDED) as again:
        _trimmed(again)
    with started(tmp_path, BOUNDED) as third:
        assert not third.add("s", called(1))


def test_the_claims_file_stays_near_the_claims_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scope keeps one record: searches 90 to 98, still remembered, keep their claims
    across a restart through ``claims.bin`` alone (their records left the scope's file)."""
    monkeypatch.setattr(dir_store, "REWRITE_FLOOR", 4)
    bounds = Bounds(ttl=3600, max_searches=10, max_events=1)
    with started(tmp_path, bounds) as store:
        for i in range(100):
            store.remember(shown(i))
            assert store.add("s", called(i))
    assert len(dir_store._records(tmp_path / "claims.bin")) <= 2 * bounds.max_searches
    in_scope = {c.search.id for c in _scope_file_records(tmp_path)}
    assert f"{90:032x}" not in in_scope
    with started(tmp_path, bounds) as again:
        assert not again.add("s", called(90))
        assert not again.add("s", called(99))


def _scope_file_records(folder: Path) -> list[Called]:
    (path,) = (folder / "scopes").glob("*.bin")
    return list(records.decoded(dir_store._records(path)[1:], records.CALLED.decode))


@contextlib.contextmanager
def claims_unwritable() -> Iterator[None]:
    """``claims.bin`` can be neither appended to nor rewritten (a full disk); other files can."""
    append, replace = dir_store._append, dir_store._replace

    def no_append(path: Path, payloads: Any, synced: bool = False) -> None:
        if path.name == "claims.bin":
            raise OSError(28, "No space left on device")
        append(path, payloads, synced)

    def no_replace(path: Path, payloads: Any) -> None:
        if path.name == "claims.bin":
            raise OSError(28, "No space left on device")
        replace(path, payloads)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dir_store, "_append", no_append)
        patch.setattr(dir_store, "_replace", no_replace)
        yield


def test_a_record_whose_claim_is_on_no_disk_stays_in_its_scope_s_file(tmp_path: Path) -> None:
    """A scope's rewrite trimmed search 1's record off its file while its claim was in no
    ``claims.bin`` (neither appended nor rewritten): after a restart the search took a
    second feedback. The rewrite now waits, and the record stays, until the claims are on
    the disk."""
    with started(tmp_path, BOUNDED) as first:
        first.remember(shown(1))
        with claims_unwritable():
            assert first.add("s", called(1))
            _trimmed(first)
        assert called(1) not in first.events("s")[1]
        assert called(1) in _scope_file_records(tmp_path)
    with started(tmp_path, BOUNDED) as again:
        assert not again.add("s", called(1))
        assert again.events("s")[1] == first.events("s")[1]


def test_a_claim_whose_append_failed_is_written_before_its_record_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = dir_store._append

    def claims_full(path: Path, payloads: Any, synced: bool = False) -> None:
        if path.name == "claims.bin":
            raise OSError(28, "No space left on device")
        real(path, payloads, synced)

    with started(tmp_path, BOUNDED) as first:
        first.remember(shown(1))
        monkeypatch.setattr(dir_store, "_append", claims_full)
        assert first.add("s", called(1))  # kept: its record holds the claim
        monkeypatch.setattr(dir_store, "_append", real)
        first.forget("s")
    with started(tmp_path, BOUNDED) as again:
        assert not again.add("s", called(1))
