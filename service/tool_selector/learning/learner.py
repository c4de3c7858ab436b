"""The learner: it remembers what each search showed, takes back what the model called, and
gives each scope's evidence to the learned arm (``pipeline.learned``).

- ``remember``: a search's scope, caller, pattern reading (vector, hashed terms) and the
  tools it answered, kept in the store for the search-id lifetime (a search answered while
  no model was loaded: no reading, and its feedback is ``unread``, never kept);
- ``feedback``: the tools of that answer the model called (``[]``: none). The first
  feedback on a search stands; names the search did not show are counted apart and move
  nothing (a feedback naming only such tools stores nothing); a search of the same caller
  and scope shortly after one that saw nothing called (its feedback in the store, from
  any replica) marks its calls ``retry``;
- ``evidence``: the scope's events as ``ranking.learned.Evidence``, rebuilt when the store's
  version of them changes (at most every ``refresh`` seconds);
- ``forget``: the scope's feedback gone; its searches then answer as with no feedback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tool_selector.errors import LearningUnavailable
from tool_selector.learning.records import Called, Shown
from tool_selector.learning.store import LearnStore
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.learned import SECONDS_PER_DAY, Evidence, LearnRule

#: A search within this many seconds after the same caller's search that saw nothing called
#: is the model searching again (its calls are ``retry``).
RETRY_SECONDS = 120.0
#: ... and whose pattern is this near the earlier one's (cosine of the first model's vectors):
#: a search for the same need, not another user's behind the same caller (a proxy with one
#: token). On the dev splits, pairs of queries for the same tools are at 0.3 or nearer in
#: 51-100% of pairs (MetaTool's 51%: other needs its popular tools serve), pairs for other
#: tools in 2-6% (Azure MCP's siblings 13.5%): docs/learning.md.
RETRY_COSINE = 0.3
#: A caller's newest feedback records in the scope looked at to tell a retry.
_RECENT = 8
#: Scopes whose evidence a replica keeps read (the least recently read go first).
_SCOPES = 10_000

#: The pattern vector of a search answered while no model was loaded: none.
_UNREAD = np.zeros(0, np.float32)

Status = Literal["accepted", "duplicate", "unknown", "unread"]
_log = logging.getLogger("tool_selector.learn")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What became of a feedback: ``accepted`` (kept), ``duplicate`` (the search had one),
    ``unknown`` (no such search, or expired), ``unread`` (a search answered while no model
    was loaded: no pattern vector to learn with, nothing kept); the called names kept and
    those the search did not show (``unshown``: counted, never kept)."""

    status: Status
    called: tuple[str, ...] = ()
    unshown: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Usage:
    """One tool's use in a scope: how often it was shown, how often called, and how often
    called after the model had searched again (``retry``)."""

    name: str
    shown: int
    called: int
    retried: int


class Learner:
    """See the module. Thread-safe; ``clock`` is seconds since the epoch. The evidence
    built is kept for the scopes read most recently: 10,000 scopes, and ``max_total``
    records (the store's bound on all scopes: a scope another replica dropped is not held
    here past it either)."""

    def __init__(
        self,
        store: LearnStore,
        rule: LearnRule,
        *,
        refresh: float = 1.0,
        clock: Callable[[], float] = time.time,
        max_total: int | None = None,
        terms_key: bytes = b"",
    ) -> None:
        self.store, self.rule, self.refresh, self._clock = store, rule, refresh, clock
        #: The key of the patterns' term hashes (``ranking.learned.terms_key``).
        self.terms_key = terms_key
        self._built: dict[str, tuple[object, float, Evidence | None]] = {}
        self._max_total, self._held = max_total, 0  # records of the evidence built
        self._reading: dict[str, threading.Event] = {}
        self._forgotten: dict[str, int] = {}
        self._lock = threading.Lock()

    def remember(
        self,
        search_id: str,
        scope: str,
        caller: str,
        reading: tuple[FloatArray, tuple[int, ...]] | None,
        tools: Sequence[tuple[str, str]],
    ) -> None:
        """Keep what search ``search_id`` showed (``tools``: identity and name, best first)
        and how its pattern reads (the first model's unit vector, hashed terms; ``None``:
        answered while no model was loaded, kept with neither, so its feedback is told so)."""
        vector, terms = (_UNREAD, ()) if reading is None else reading
        at = self._clock()
        try:
            self.store.remember(
                Shown(
                    id=search_id,
                    scope=scope,
                    caller=caller,
                    at=at,
                    vector=np.ascontiguousarray(vector, np.float32).tobytes(),
                    terms=terms,
                    tools=tuple(i for i, _ in tools),
                    names=tuple(n for _, n in tools),
                )
            )
        except Exception:  # the search is answered all the same; its feedback will 404
            _log.warning("search %s not remembered", search_id, exc_info=True)
            return

    def feedback(self, search_id: str, called: Sequence[str]) -> Verdict:
        """Record which tools of search ``search_id``'s answer the model called."""
        shown = self.store.recall(search_id)
        if shown is None:
            return Verdict("unknown")
        if not shown.vector:  # answered while no model was loaded: nothing to learn with
            return Verdict("unread")
        names = dict(zip(shown.names, shown.tools, strict=True))
        kept = tuple(dict.fromkeys(n for n in called if n in names))
        unshown = tuple(dict.fromkeys(n for n in called if n not in names))
        if unshown and not kept:  # moves nothing; a duplicate when the search had feedback
            return Verdict("duplicate" if self._claimed(search_id) else "accepted", (), unshown)
        record = Called(shown, tuple(names[n] for n in kept), self._retry(shown))
        if not self.store.add(shown.scope, record):
            return Verdict("duplicate", (), unshown)
        return Verdict("accepted", kept, unshown)

    def _claimed(self, search_id: str) -> bool:
        """Whether the search has feedback kept (a flag only: ``False`` when the store
        cannot say)."""
        try:
            return self.store.claimed(search_id)
        except LearningUnavailable:
            return False

    def _retry(self, shown: Shown) -> bool:
        """Whether the same caller searched the scope for the same need just before and saw
        nothing called, by the caller's newest feedback in the store (whichever replica took
        it): within ``RETRY_SECONDS``, its pattern within ``RETRY_COSINE``."""
        try:
            earlier = self.store.recent(shown.scope, shown.caller, _RECENT)
        except LearningUnavailable:  # a flag, not the feedback: the store's add tells
            return False
        vector = shown.unit
        return any(
            not r.called and 0 < shown.at - r.search.at <= RETRY_SECONDS and _near(vector, r.vector)
            for r in earlier
        )

    def evidence(self, scope: str) -> Evidence | None:
        """The scope's evidence (``None`` when it has no feedback), read from the store at
        most every ``refresh`` seconds (a scope without feedback too: the store is not asked
        on every search) and rebuilt only when the store's version of it changed. One search
        a scope reads it: while it does, the scope's other searches take what was built
        before, or wait for it where nothing was (a cold replica reads a scope once)."""
        now = self._clock()
        with self._lock:
            built = self._built.get(scope)
            reading = self._reading.get(scope)
            if built is not None and (now - built[1] < self.refresh or reading is not None):
                return built[2]
            if reading is None:
                forgotten = self._forgotten.get(scope, 0)
                self._reading[scope] = mine = threading.Event()
        if reading is not None:  # the scope's first read is in flight
            reading.wait()
            with self._lock:
                done = self._built.get(scope)
            return done[2] if done is not None else None
        try:
            evidence, version = self._read(scope, built, now)
            self._keep(scope, (version, now, evidence), forgotten)
        finally:
            with self._lock:
                del self._reading[scope]
            mine.set()
        return evidence

    def _keep(
        self, scope: str, built: tuple[object, float, Evidence | None], forgotten: int
    ) -> None:
        """Keep what was read of ``scope``, unless it was forgotten since (a read in flight
        at a forget is not kept)."""
        with self._lock:
            if self._forgotten.get(scope, 0) != forgotten:
                return
            self._unbuild(scope)  # then to the end: the least recently read go first
            self._built[scope] = built
            self._held += _size(built)
            limit = self._max_total or self._held
            while len(self._built) > 1 and (len(self._built) > _SCOPES or self._held > limit):
                self._unbuild(next(iter(self._built)))

    def _unbuild(self, scope: str) -> None:
        """Drop what was built of ``scope`` (it is read again when asked); under the lock."""
        self._held -= _size(self._built.pop(scope, (None, 0.0, None)))

    def _read(
        self, scope: str, built: tuple[object, float, Evidence | None] | None, now: float
    ) -> tuple[Evidence | None, object]:
        """The scope's evidence from the store and its version (``built``'s when unchanged
        and none of its events has outlived the time to live since: the version moves only
        when the scope is fed or forgotten, and a scope nobody feeds must still forget)."""
        version, records = self.store.events(scope)
        if built is not None and built[0] == version and not _outlived(built[2], self.rule, now):
            return built[2], version
        return (Evidence.of(records, self.rule, now) if records else None), version

    def sizes(self) -> tuple[int, int, int]:
        """Scopes read holding feedback, their events in all, and the largest scope's."""
        with self._lock:
            counts = [len(b[2]) for b in self._built.values() if b[2] is not None]
        return len(counts), sum(counts), max(counts, default=0)

    def forget(self, scope: str) -> None:
        """Drop the scope's feedback (every replica's, where the store is shared)."""
        self.store.forget(scope)
        with self._lock:
            self._unbuild(scope)
            self._forgotten[scope] = self._forgotten.pop(scope, 0) + 1  # a read in flight
            while len(self._forgotten) > _SCOPES:  # keeps nothing then
                del self._forgotten[next(iter(self._forgotten))]

    def usage(self, scope: str) -> dict[str, Usage]:
        """Each tool's use in the scope, by identity (the catalog report's counts)."""
        names: dict[str, str] = {}
        counts: dict[str, list[int]] = {}
        for record in self.store.events(scope)[1]:
            for identity, name in zip(record.search.tools, record.search.names, strict=True):
                names[identity] = name
                row = counts.setdefault(identity, [0, 0, 0])
                row[0] += 1
                if identity in record.called:
                    row[1] += 1
                    row[2] += int(record.retry)
        return {i: Usage(names[i], *row) for i, row in counts.items()}


def _outlived(evidence: Evidence | None, rule: LearnRule, now: float) -> bool:
    """Whether an event of ``evidence`` is older than ``rule.keep.ttl`` days at ``now``."""
    return (
        evidence is not None
        and len(evidence.at) > 0
        and now - float(evidence.at.min()) > rule.keep.ttl * SECONDS_PER_DAY
    )


def _near(vector: FloatArray, other: FloatArray) -> bool:
    """Whether two patterns' unit vectors are within ``RETRY_COSINE`` (vectors of other
    lengths, as from another model, are not)."""
    return vector.shape == other.shape and float(vector @ other) >= RETRY_COSINE


def _size(built: tuple[object, float, Evidence | None]) -> int:
    """The records of built evidence (none: 0)."""
    return 0 if built[2] is None else len(built[2])
