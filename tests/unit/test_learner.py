"""The learner (``learning.learner``): a search's feedback, once, about what it showed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from tests.support import start_redis
from tool_selector.errors import LearningUnavailable
from tool_selector.learning.learner import RETRY_COSINE, RETRY_SECONDS, Learner
from tool_selector.learning.records import Called
from tool_selector.learning.redis_store import RedisStore
from tool_selector.learning.store import Bounds, MemoryStore
from tool_selector.ranking.learned import SECONDS_PER_DAY, Evidence, LearnRule

READING = (np.eye(4, dtype=np.float32)[0], (11, 12))
TOOLS = [("ida", "get_a"), ("idb", "get_b")]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def learner(clock: Clock | None = None) -> Learner:
    clock = clock or Clock()
    store = MemoryStore(Bounds(ttl=3600, max_searches=100, max_events=100), clock)
    return Learner(store, LearnRule(), refresh=0.0, clock=clock)


def test_feedback_keeps_the_called_tools_of_the_answer() -> None:
    it = learner()
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    verdict = it.feedback("s1", ["get_b"])
    assert (verdict.status, verdict.called, verdict.unshown) == ("accepted", ("get_b",), ())
    (record,) = it.store.events("scope")[1]
    assert (record.search.tools, record.called) == (("ida", "idb"), ("idb",))


def test_an_unknown_search_is_unknown() -> None:
    assert learner().feedback("nope", ["get_a"]).status == "unknown"


def test_names_the_search_did_not_show_move_nothing() -> None:
    it = learner()
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    verdict = it.feedback("s1", ["delete_everything"])
    assert (verdict.called, verdict.unshown) == ((), ("delete_everything",))
    assert it.store.events("scope")[1] == ()
    mixed = it.feedback("s1", ["get_a", "delete_everything"])
    assert (mixed.called, mixed.unshown) == (("get_a",), ("delete_everything",))


def test_the_first_feedback_stands() -> None:
    it = learner()
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    assert it.feedback("s1", ["get_a"]).status == "accepted"
    assert it.feedback("s1", ["get_b"]).status == "duplicate"
    assert len(it.store.events("scope")[1]) == 1


def test_unshown_names_after_the_first_feedback_are_a_duplicate() -> None:
    """Before the first feedback they are accepted and move nothing; after it, the search
    has its feedback: a duplicate (it said ``accepted``, ``duplicate: false``)."""
    it = learner()
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    assert it.feedback("s1", ["delete_everything"]).status == "accepted"
    assert it.feedback("s1", ["get_a"]).status == "accepted"
    late = it.feedback("s1", ["delete_everything"])
    assert (late.status, late.called, late.unshown) == ("duplicate", (), ("delete_everything",))
    assert len(it.store.events("scope")[1]) == 1


def test_a_search_after_one_that_saw_nothing_called_is_a_retry() -> None:
    clock = Clock()
    it = learner(clock)
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", [])
    clock.now += 10
    it.remember("s2", "scope", "proxy", READING, TOOLS)
    it.feedback("s2", ["get_b"])
    clock.now += RETRY_SECONDS + 1
    it.remember("s3", "scope", "proxy", READING, TOOLS)
    it.feedback("s3", ["get_a"])
    first, second, third = it.store.events("scope")[1]
    assert (first.retry, second.retry, third.retry) == (False, True, False)
    usage = it.usage("scope")
    assert (usage["idb"].shown, usage["idb"].called, usage["idb"].retried) == (3, 1, 1)
    assert (usage["ida"].called, usage["ida"].retried) == (1, 0)


def test_a_search_for_another_need_right_after_is_no_retry() -> None:
    """A proxy with one token is one caller for many users: a search unlike the one that
    saw nothing called is another need, not the model searching again."""
    clock = Clock()
    it = learner(clock)
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", [])
    clock.now += 10
    far, near = (np.array([c, (1 - c * c) ** 0.5, 0, 0], np.float32) for c in (0.29, 0.31))
    assert READING[0] @ far < RETRY_COSINE < READING[0] @ near
    it.remember("s2", "scope", "proxy", (far, (13,)), TOOLS)
    it.feedback("s2", ["get_a"])
    it.remember("s3", "scope", "proxy", (near, (13,)), TOOLS)
    it.feedback("s3", ["get_b"])
    assert [r.retry for r in it.store.events("scope")[1]] == [False, False, True]


def test_evidence_follows_the_store_and_forget_clears_it() -> None:
    it = learner()
    assert it.evidence("scope") is None
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", ["get_a"])
    built = it.evidence("scope")
    assert built is not None
    assert len(built) == 1
    assert it.evidence("scope") is built  # unchanged: not rebuilt
    it.forget("scope")
    assert it.evidence("scope") is None
    assert it.sizes() == (0, 0, 0)


class FailingOnce(MemoryStore):
    """A store whose first write fails, as a full disk or a Redis gone would."""

    def __init__(self) -> None:
        super().__init__(Bounds(ttl=3600, max_searches=100, max_events=100), Clock())
        self.fail = True

    def add(self, scope: str, record: Called) -> bool:
        if self.fail:
            self.fail = False
            raise LearningUnavailable("learning_unavailable", "disk full")
        return super().add(scope, record)


def test_feedback_the_store_could_not_keep_is_taken_on_its_retry() -> None:
    it = Learner(FailingOnce(), LearnRule(), refresh=0.0, clock=Clock())
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    with pytest.raises(LearningUnavailable):
        it.feedback("s1", ["get_a"])
    assert it.feedback("s1", ["get_a"]).status == "accepted"
    assert it.feedback("s1", ["get_a"]).status == "duplicate"
    assert len(it.store.events("scope")[1]) == 1


def test_a_retry_is_told_across_replicas_sharing_a_redis(tmp_path: Path) -> None:
    redis, clock = start_redis(tmp_path), Clock()
    bounds = Bounds(ttl=3600, max_searches=100, max_events=100)
    stores = [RedisStore(redis.url, bounds), RedisStore(redis.url, bounds)]
    one, two = (Learner(store, LearnRule(), refresh=0.0, clock=clock) for store in stores)
    try:
        one.remember("s1", "scope", "proxy", READING, TOOLS)
        assert two.feedback("s1", []).status == "accepted"  # nothing called, said to two
        clock.now += 10
        two.remember("s2", "scope", "proxy", READING, TOOLS)
        assert one.feedback("s2", ["get_b"]).status == "accepted"
        two.remember("s3", "scope", "other", READING, TOOLS)  # another caller: no retry
        assert one.feedback("s3", ["get_a"]).status == "accepted"
        assert [r.retry for r in one.store.events("scope")[1]] == [False, True, False]
    finally:
        for store in stores:
            store.close()
        redis.stop()


class SlowReads(MemoryStore):
    """A store whose reads wait for ``go`` once ``hold`` is set (giving back what they read
    before the wait), counting them."""

    def __init__(self) -> None:
        super().__init__(Bounds(ttl=3600, max_searches=100, max_events=100), Clock())
        self.hold, self.go, self.inside, self.reads = False, threading.Event(), threading.Event(), 0

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        self.reads += 1
        read = super().events(scope)  # what the store holds now, given back after the wait
        if self.hold:
            self.inside.set()
            assert self.go.wait(10)
        return read

    def held(self, it: Learner) -> tuple[threading.Thread, list[Evidence | None]]:
        """A search's read of the scope in a thread, once this store holds it."""
        self.hold = True
        read: list[Evidence | None] = []
        thread = threading.Thread(target=lambda: read.append(it.evidence("scope")))
        thread.start()
        assert self.inside.wait(10)
        return thread, read


def test_while_one_search_rebuilds_a_scope_the_others_take_what_was_built() -> None:
    store = SlowReads()
    it = Learner(store, LearnRule(), refresh=0.0, clock=Clock())
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", ["get_a"])
    before = it.evidence("scope")
    it.remember("s2", "scope", "proxy", READING, TOOLS)
    it.feedback("s2", ["get_b"])
    first, rebuilt = store.held(it)
    reads = store.reads
    assert [it.evidence("scope") for _ in range(5)] == [before] * 5
    assert store.reads == reads  # the others did not read the store
    store.go.set()
    first.join(10)
    (evidence,) = rebuilt
    assert evidence is not None
    assert len(evidence) == 2
    assert it.evidence("scope") is not before


def test_a_read_in_flight_when_a_scope_is_forgotten_is_not_kept() -> None:
    store = SlowReads()
    it = Learner(store, LearnRule(), refresh=3600.0, clock=Clock())
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", ["get_a"])
    first, read = store.held(it)
    store.hold = False
    it.forget("scope")  # while the read holds the records of before
    store.go.set()
    first.join(10)
    assert read[0] is not None  # the search in flight answers with what it read
    assert it.evidence("scope") is None  # the next one reads again: forgotten


def test_a_scope_read_for_the_first_time_is_read_once_however_many_search_it() -> None:
    store = SlowReads()
    it = Learner(store, LearnRule(), refresh=3600.0, clock=Clock())
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", ["get_a"])
    first, read = store.held(it)  # nothing built yet: a cold replica's first search
    asking = threading.Semaphore(0)

    def ask() -> Evidence | None:
        asking.release()
        return it.evidence("scope")

    with ThreadPoolExecutor(4) as pool:
        others = [pool.submit(ask) for _ in range(4)]
        for _ in others:
            assert asking.acquire(timeout=10)
        time.sleep(0.05)  # into evidence(): before, each read the store beside the first
        assert not any(f.done() for f in others)  # they wait for the read in flight
        store.go.set()
        answers = [f.result(10) for f in others]
    first.join(10)
    assert store.reads == 1
    assert read[0] is not None
    assert answers == [read[0]] * 4


def test_the_searches_waiting_on_a_first_read_that_fails_answer_without_evidence() -> None:
    class Fails(SlowReads):
        def events(self, scope: str) -> tuple[object, Sequence[Called]]:
            super().events(scope)
            raise LearningUnavailable("learning_unavailable", "learning store: gone")

    store = Fails()
    it = Learner(store, LearnRule(), refresh=0.0, clock=Clock())
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", ["get_a"])
    errors: list[BaseException] = []
    store.hold = True
    first = threading.Thread(target=lambda: _catch(errors, lambda: it.evidence("scope")))
    first.start()
    assert store.inside.wait(10)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(it.evidence, "scope")
        store.go.set()
        assert waiting.result(10) is None
    first.join(10)
    assert [type(e) for e in errors] == [LearningUnavailable]
    store.hold = False
    with pytest.raises(LearningUnavailable):  # the next search reads again
        it.evidence("scope")


def _catch(errors: list[BaseException], call: Callable[[], object]) -> None:
    try:
        call()
    except BaseException as exc:
        errors.append(exc)


def test_the_evidence_built_holds_no_more_records_than_all_scopes_may() -> None:
    clock = Clock()
    store = MemoryStore(Bounds(ttl=3600, max_searches=1000, max_events=10), clock)
    it = Learner(store, LearnRule(), refresh=0.0, clock=clock, max_total=25)
    for n in range(20):  # twenty tenants, ten records each, read once, then quiet
        scope = f"tenant{n}"
        for i in range(10):
            it.remember(f"{scope}-{i}", scope, f"caller{i}", READING, TOOLS)
            it.feedback(f"{scope}-{i}", ["get_a"])
        assert it.evidence(scope) is not None
    scopes, records, largest = it.sizes()
    assert (scopes, records, largest) == (2, 20, 10)  # the two read last
    assert it.evidence("tenant0") is not None  # read again when asked


def test_a_store_that_cannot_tell_the_caller_s_recent_feedback_takes_it_as_no_retry() -> None:
    class Blind(MemoryStore):
        def recent(self, scope: str, caller: str, count: int) -> Sequence[Called]:
            raise LearningUnavailable("learning_unavailable", "learning store: gone")

    clock = Clock()
    store = Blind(Bounds(ttl=3600, max_searches=100, max_events=100), clock)
    it = Learner(store, LearnRule(), refresh=0.0, clock=clock)
    it.remember("s1", "scope", "proxy", READING, TOOLS)
    it.feedback("s1", [])
    it.remember("s2", "scope", "proxy", READING, TOOLS)
    assert it.feedback("s2", ["get_a"]).status == "accepted"
    assert [r.retry for r in store.events("scope")[1]] == [False, False]


def test_feedback_past_its_time_to_live_stops_voting_though_nobody_feeds_the_scope() -> None:
    """The evidence built was reused while the store's version stood still, and it moves only
    when the scope is fed or forgotten: feedback 200 days old (the rule's ttl: 180) still
    voted until the process restarted."""
    clock = Clock()
    it = learner(clock)
    for i in range(3):
        it.remember(f"s{i}", "scope", "proxy", READING, TOOLS)
        assert it.feedback(f"s{i}", ["get_a"]).status == "accepted"
    built = it.evidence("scope")
    assert built is not None
    assert len(built) == 3
    clock.now += 179 * SECONDS_PER_DAY
    assert it.evidence("scope") is built  # within the ttl: what was built is reused
    clock.now += 2 * SECONDS_PER_DAY
    aged = it.evidence("scope")
    assert aged is None or len(aged) == 0
