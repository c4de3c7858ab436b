"""Where the learner keeps remembered searches and feedback: a protocol, and the in-memory
reference every backend is tested against (``tests/unit/test_learn_store.py``).

- ``remember``/``recall``: a search for ``ttl`` seconds at least (bounded: the oldest go);
- ``add``: a search's feedback kept, in one step with its claim: false, keeping nothing,
  when the search has feedback already (the first stands; a repeat moves nothing), and a
  write that fails claims nothing (the retry is taken) while one that landed unseen (a
  timeout) makes the retry a repeat;
- ``events``: a scope's feedback as ``ScopeLog`` keeps it (each caller's newest
  ``per_caller``, then the scope's newest ``max_events``: a caller flooding a shared scope
  pushes out its own records, not the others'); ``events`` gives a version that changes
  whenever the events do (the learner rebuilds its evidence then);
- ``forget``: a scope's feedback gone, everywhere;
- ``scopes``: the scopes holding feedback.

Backends: ``MemoryStore`` (this module: one process, lost on restart; tests and the eval),
``DirStore`` (``learning/dir_store.py``: one replica's disk, ``TOOL_SELECTOR_LEARN_DIR``),
``RedisStore`` (``learning/redis_store.py``: every replica, ``TOOL_SELECTOR_LEARN_REDIS_URL``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import Protocol

from tool_selector.learning.records import Called, Shown

Clock = Callable[[], float]


class LearnStore(Protocol):
    """Remembered searches and each scope's feedback (see the module)."""

    def remember(self, search: Shown) -> None: ...

    def recall(self, search_id: str) -> Shown | None: ...

    def add(self, scope: str, record: Called) -> bool: ...

    def events(self, scope: str) -> tuple[object, Sequence[Called]]: ...

    def forget(self, scope: str) -> None: ...

    def scopes(self) -> list[str]: ...

    def close(self) -> None: ...


class Bounds:
    """How long a search is remembered (``ttl`` seconds), how many at most
    (``max_searches``), how many feedback records a scope keeps (``max_events``), and how
    many of them one caller's may be (``per_caller``; none: ``max_events``)."""

    def __init__(
        self, ttl: float, max_searches: int, max_events: int, per_caller: int | None = None
    ) -> None:
        self.ttl, self.max_searches, self.max_events = ttl, max(1, max_searches), max(1, max_events)
        self.per_caller = max(1, min(per_caller or self.max_events, self.max_events))


class ScopeLog:
    """A scope's feedback as every backend keeps it, oldest first: a record beyond its
    caller's ``per_caller`` pushes out that caller's oldest, then one beyond ``max_events``
    the scope's oldest. Each add costs the same however the records fall among callers."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self._records: dict[int, Called] = {}  # by arrival, oldest first
        self._callers: dict[str, deque[int]] = {}
        self._next = 0

    @property
    def records(self) -> tuple[Called, ...]:
        return tuple(self._records.values())

    def add(self, record: Called) -> None:
        records, caller = self._records, record.search.caller
        records[self._next] = record
        mine = self._callers.setdefault(caller, deque())
        mine.append(self._next)
        self._next += 1
        if len(mine) > self.bounds.per_caller:
            del records[mine.popleft()]
        while len(records) > self.bounds.max_events:
            oldest = records.pop(next(iter(records))).search.caller
            self._callers[oldest].popleft()  # the scope's oldest is its caller's oldest
            if not self._callers[oldest]:
                del self._callers[oldest]


class MemoryStore:
    """Everything in this process's memory, bounded like the others; thread-safe."""

    def __init__(self, bounds: Bounds, clock: Clock = time.time) -> None:
        self.bounds, self._clock = bounds, clock
        self._searches: OrderedDict[str, Shown] = OrderedDict()
        self._claims: OrderedDict[str, float] = OrderedDict()
        self._events: dict[str, ScopeLog] = {}
        self._versions: dict[str, int] = {}
        self._lock = threading.Lock()

    def remember(self, search: Shown) -> None:
        with self._lock:
            self._searches[search.id] = search
            self._searches.move_to_end(search.id)
            self._trim()

    def recall(self, search_id: str) -> Shown | None:
        with self._lock:
            found = self._searches.get(search_id)
        if found is None or self._clock() - found.at > self.bounds.ttl:
            return None
        return found

    def claimed(self, search_id: str) -> bool:
        """Whether the search has feedback kept."""
        with self._lock:
            return search_id in self._claims

    def add(self, scope: str, record: Called) -> bool:
        with self._lock:
            if record.search.id in self._claims:
                return False
            self._claims[record.search.id] = self._clock()
            while len(self._claims) > self.bounds.max_searches:
                self._claims.popitem(last=False)
            self._events.setdefault(scope, ScopeLog(self.bounds)).add(record)
            self._versions[scope] = self._versions.get(scope, 0) + 1
            return True

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        with self._lock:
            kept = self._events.get(scope)
            return self._versions.get(scope, 0), kept.records if kept else ()

    def forget(self, scope: str) -> None:
        with self._lock:
            self._events.pop(scope, None)
            self._versions[scope] = self._versions.get(scope, 0) + 1

    def scopes(self) -> list[str]:
        with self._lock:
            return sorted(s for s, kept in self._events.items() if kept.records)

    def close(self) -> None:
        """Nothing to release."""

    def kept(self) -> int:
        """How many searches are still remembered."""
        with self._lock:
            self._trim()
            return len(self._searches)

    def remembered(self) -> list[Shown]:
        """The searches still remembered, oldest first."""
        with self._lock:
            self._trim()
            return list(self._searches.values())

    def _trim(self) -> None:
        now = self._clock()
        searches = self._searches
        while searches and (
            len(searches) > self.bounds.max_searches
            or now - next(iter(searches.values())).at > self.bounds.ttl
        ):
            searches.popitem(last=False)
