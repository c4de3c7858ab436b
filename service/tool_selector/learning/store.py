"""Where the learner keeps remembered searches and feedback: a protocol, and the in-memory
reference every backend is tested against (``tests/unit/test_learn_store.py``).

- ``remember``/``recall``: a search for ``ttl`` seconds at least (bounded: the oldest go);
- ``claim``: true once per search id (the first feedback stands; a repeat moves nothing);
- ``add``/``events``: a scope's feedback, the newest ``max_events`` kept; ``events`` gives a
  version that changes whenever the events do (the learner rebuilds its evidence then);
- ``forget``: a scope's feedback gone, everywhere;
- ``scopes``: the scopes holding feedback.

Backends: ``MemoryStore`` (this module: one process, lost on restart; tests and the eval),
``DirStore`` (``learning/dir_store.py``: one replica's disk, ``TOOL_SELECTOR_LEARN_DIR``),
``RedisStore`` (``learning/redis_store.py``: every replica, ``TOOL_SELECTOR_LEARN_REDIS_URL``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

from tool_selector.learning.records import Called, Shown

Clock = Callable[[], float]


class LearnStore(Protocol):
    """Remembered searches and each scope's feedback (see the module)."""

    def remember(self, search: Shown) -> None: ...

    def recall(self, search_id: str) -> Shown | None: ...

    def claim(self, search_id: str) -> bool: ...

    def add(self, scope: str, record: Called) -> None: ...

    def events(self, scope: str) -> tuple[object, Sequence[Called]]: ...

    def forget(self, scope: str) -> None: ...

    def scopes(self) -> list[str]: ...

    def close(self) -> None: ...


class Bounds:
    """How long a search is remembered (``ttl`` seconds), how many at most
    (``max_searches``), and how many feedback records a scope keeps (``max_events``)."""

    def __init__(self, ttl: float, max_searches: int, max_events: int) -> None:
        self.ttl, self.max_searches, self.max_events = ttl, max(1, max_searches), max(1, max_events)


class MemoryStore:
    """Everything in this process's memory, bounded like the others; thread-safe."""

    def __init__(self, bounds: Bounds, clock: Clock = time.time) -> None:
        self.bounds, self._clock = bounds, clock
        self._searches: OrderedDict[str, Shown] = OrderedDict()
        self._claims: OrderedDict[str, float] = OrderedDict()
        self._events: dict[str, list[Called]] = {}
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

    def claim(self, search_id: str) -> bool:
        with self._lock:
            if search_id in self._claims:
                return False
            self._claims[search_id] = self._clock()
            while len(self._claims) > self.bounds.max_searches:
                self._claims.popitem(last=False)
            return True

    def add(self, scope: str, record: Called) -> None:
        with self._lock:
            kept = self._events.setdefault(scope, [])
            kept.append(record)
            del kept[: max(0, len(kept) - self.bounds.max_events)]
            self._versions[scope] = self._versions.get(scope, 0) + 1

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        with self._lock:
            return self._versions.get(scope, 0), tuple(self._events.get(scope, ()))

    def forget(self, scope: str) -> None:
        with self._lock:
            self._events.pop(scope, None)
            self._versions[scope] = self._versions.get(scope, 0) + 1

    def scopes(self) -> list[str]:
        with self._lock:
            return sorted(s for s, kept in self._events.items() if kept)

    def close(self) -> None:
        """Nothing to release."""

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
