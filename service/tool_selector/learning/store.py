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
- ``recent``: one caller's newest records in a scope (the learner tells a retry by them,
  whichever replica took them);
- ``forget``: a scope's feedback gone, everywhere;
- ``scopes``: the scopes holding feedback.

Every store keeps ``max_total`` records across its scopes at most: past it, the scope fed
least recently is dropped whole, as ``forget`` drops it (``on_drop`` is told its name), until
the rest fit; the scope just fed is never dropped (``max_total`` is one scope's room at
least). A caller naming a new scope each request thus bounds memory and disk, and a scope
no one feeds any more goes first.

Backends: ``MemoryStore`` (this module: one process, lost on restart; tests and the eval),
``DirStore`` (``learning/dir_store.py``: one replica's disk, ``TOOL_SELECTOR_LEARN_DIR``),
``RedisStore`` (``learning/redis_store.py``: every replica, ``TOOL_SELECTOR_LEARN_REDIS_URL``).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import Protocol

from tool_selector.learning.records import Called, Shown

Clock = Callable[[], float]
#: Told the name of each scope a store dropped whole to keep ``Bounds.max_total``.
OnDrop = Callable[[str], None]


class LearnStore(Protocol):
    """Remembered searches and each scope's feedback (see the module)."""

    def remember(self, search: Shown) -> None: ...

    def recall(self, search_id: str) -> Shown | None: ...

    def claimed(self, search_id: str) -> bool: ...

    def add(self, scope: str, record: Called) -> bool: ...

    def events(self, scope: str) -> tuple[object, Sequence[Called]]: ...

    def recent(self, scope: str, caller: str, count: int) -> Sequence[Called]: ...

    def forget(self, scope: str) -> None: ...

    def scopes(self) -> list[str]: ...

    def close(self) -> None: ...


class Bounds:
    """How long a search is remembered (``ttl`` seconds), how many at most
    (``max_searches``), how many feedback records a scope keeps (``max_events``), how many
    of them one caller's may be (``per_caller``; none: ``max_events``), and how many all
    scopes keep together (``max_total``; none: no bound; never below ``max_events``)."""

    def __init__(
        self,
        ttl: float,
        max_searches: int,
        max_events: int,
        per_caller: int | None = None,
        *,
        max_total: int | None = None,
    ) -> None:
        self.ttl, self.max_searches, self.max_events = ttl, max(1, max_searches), max(1, max_events)
        self.per_caller = max(1, min(per_caller or self.max_events, self.max_events))
        self.max_total = max(self.max_events, max_total) if max_total else None


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

    def __len__(self) -> int:
        return len(self._records)

    def recent(self, caller: str, count: int) -> tuple[Called, ...]:
        """``caller``'s newest ``count`` records, oldest first."""
        mine = self._callers.get(caller, ())
        newest = itertools.islice(reversed(mine), count)
        return tuple(self._records[k] for k in reversed(list(newest)))

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

    def __init__(
        self, bounds: Bounds, clock: Clock = time.time, on_drop: OnDrop | None = None
    ) -> None:
        self.bounds, self._clock, self._on_drop = bounds, clock, on_drop
        self._searches: OrderedDict[str, Shown] = OrderedDict()
        self._claims: OrderedDict[str, float] = OrderedDict()
        self._events: OrderedDict[str, ScopeLog] = OrderedDict()  # the least recently fed first
        self._total = 0
        self._versions: dict[str, int] = {}  # a scope's, from one count: a number never reused
        self._count = itertools.count(1)
        self._lock = threading.Lock()

    def _trim_claims(self) -> None:
        """(Under the lock.) Claims past ``max_searches`` go from the front, where the claims
        of searches no longer remembered are (``_trim`` and ``add`` put them there): one of
        a search still remembered would let its feedback count twice. (No more searches are
        remembered than that, so the front holds one.) O(1) a claim."""
        while len(self._claims) > self.bounds.max_searches:
            self._claims.popitem(last=False)

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

    def claim(self, search_id: str, at: float) -> None:
        """Claim ``search_id`` at ``at`` with no record (a claim read back from a file whose
        record is gone: trimmed, forgotten or dropped while its search is remembered)."""
        with self._lock:
            self._claimed(search_id, at)

    def _claimed(self, search_id: str, at: float) -> None:
        """(Under the lock.) The claim kept; one of a search not remembered goes to the
        front, where ``_trim_claims`` takes the first."""
        self._claims[search_id] = at
        if search_id not in self._searches:  # read back from a file at start
            self._claims.move_to_end(search_id, last=False)
        self._trim_claims()

    def claims(self) -> list[tuple[str, float]]:
        """Each claim made within ``ttl`` (its search may still be recalled), and when."""
        with self._lock:
            now = self._clock()
            return [(i, at) for i, at in self._claims.items() if now - at <= self.bounds.ttl]

    def claim_count(self) -> int:
        """How many claims are held."""
        with self._lock:
            return len(self._claims)

    def add(self, scope: str, record: Called) -> bool:
        with self._lock:
            if record.search.id in self._claims:
                return False
            self._claimed(record.search.id, self._clock())
            log = self._events.pop(scope, None) or ScopeLog(self.bounds)
            self._total -= len(log)
            log.add(record)
            self._total += len(log)
            self._events[scope] = log
            self._versions[scope] = next(self._count)
            dropped = self._make_room()
        if self._on_drop is not None:
            for name in dropped:
                self._on_drop(name)
        return True

    def _make_room(self) -> list[str]:
        """Drop the scopes fed least recently while all hold more than ``max_total``."""
        dropped: list[str] = []
        limit = self.bounds.max_total
        while limit is not None and self._total > limit and len(self._events) > 1:
            name, log = self._events.popitem(last=False)
            self._total -= len(log)
            del self._versions[name]
            dropped.append(name)
        return dropped

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        with self._lock:
            kept = self._events.get(scope)
            return self._versions.get(scope, 0), kept.records if kept else ()

    def recent(self, scope: str, caller: str, count: int) -> Sequence[Called]:
        with self._lock:
            kept = self._events.get(scope)
            return kept.recent(caller, count) if kept else ()

    def size(self, scope: str) -> int:
        """How many feedback records the scope keeps."""
        with self._lock:
            kept = self._events.get(scope)
            return len(kept) if kept else 0

    def forget(self, scope: str) -> None:
        with self._lock:
            log = self._events.pop(scope, None)
            self._total -= len(log) if log else 0
            self._versions.pop(scope, None)

    def scopes(self) -> list[str]:
        with self._lock:
            return sorted(s for s, kept in self._events.items() if kept.records)

    def total(self) -> int:
        """Feedback records kept, all scopes together."""
        with self._lock:
            return self._total

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
            gone, _ = searches.popitem(last=False)
            if gone in self._claims:  # its claim goes before any of a search remembered
                self._claims.move_to_end(gone, last=False)
