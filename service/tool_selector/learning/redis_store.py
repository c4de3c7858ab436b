"""The learner's store in Redis (``TOOL_SELECTOR_LEARN_REDIS_URL``), shared by every replica.

Keys (prefix ``tool-selector:learn:``):

- ``search:<id>``: a remembered search (``Shown``, MessagePack), ``SET .. EX`` the search
  TTL, so any replica takes feedback for any replica's search;
- ``claim:<id>``: ``SET NX`` by the first feedback on a search (a repeat moves nothing);
- ``events:<scope>``: a stream of the scope's feedback (``Called``, and the key of its
  caller's ids); a replica reads only the entries after the last one it read;
- ``ids:<digest of scope and caller>``: the stream ids of one caller's entries in a scope,
  oldest first (emptied lists deleted);
- ``callers:<scope>``: the scope's ``ids`` keys (``forget`` deletes them);
- ``epoch:<scope>``: bumped by ``forget`` (which deletes the stream), so every replica drops
  what it read of the scope;
- ``scopes``: the set of scopes holding feedback.

A feedback is one script (``_ADD``): the claim, the entry, then ``ScopeLog``'s rule (past its
caller's ``per_caller`` that caller's oldest entry deleted, then past ``max_events`` the
scope's oldest), so the stream holds what a replica reading it keeps, a caller flooding a
shared scope pushes out its own entries only, and a retry after a write that landed unseen
(a timeout) finds the claim. ``forget`` is one script too.

The evidence must not be evicted nor lost on a restart: this Redis is not the embedding
cache's (an LRU without persistence) but one with an append-only file and
``maxmemory-policy noeviction`` (``deploy/k8s/components/learn-redis``). A write that fails raises
``LearningUnavailable`` (the feedback answers 503, not 2xx); a read that fails serves what
the replica read last.

A circuit breaker (the embedding cache's, ``embeddings/breaker.py``) opens at the first
failure to reach Redis (a refused connection, a timeout; an error Redis answers, such as out
of memory, is the call's alone): while it is open no call reaches Redis, so a hung learning
Redis costs one search its timeout, not every search (a search is remembered before its
answer and a scope's evidence read at most every ``TOOL_SELECTOR_LEARN_REFRESH_MS``):
searches are answered unremembered, evidence is what the replica read last, feedback
answers 503 at once. Once ``reset_after`` has passed, the next call is the probe
(``CircuitBreaker.try_probe``: the calls beside it still skip); its success closes the
breaker.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tool_selector.embeddings.breaker import CircuitBreaker
from tool_selector.errors import LearningUnavailable, MissingDependencyError
from tool_selector.learning.records import CALLED, ENCODE, SHOWN, Called, Shown
from tool_selector.learning.store import Bounds, ScopeLog

PREFIX = "tool-selector:learn:"
#: KEYS: the claim, the scope's stream, the caller's ids, the scopes set, the scope's
#: callers; ARGV: the record, max_events, per_caller, the scope, the claim's TTL. 0: a repeat.
_ADD = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[5]) then return 0 end
local id = redis.call('XADD', KEYS[2], '*', 'r', ARGV[1], 'k', KEYS[3])
redis.call('RPUSH', KEYS[3], id)
redis.call('SADD', KEYS[5], KEYS[3])
if redis.call('LLEN', KEYS[3]) > tonumber(ARGV[3]) then
  redis.call('XDEL', KEYS[2], redis.call('LPOP', KEYS[3]))
end
while redis.call('XLEN', KEYS[2]) > tonumber(ARGV[2]) do
  local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
  local fields, ids = first[2], nil
  for i = 1, #fields, 2 do if fields[i] == 'k' then ids = fields[i + 1] end end
  if ids then  -- none on an entry written before the ids were kept
    redis.call('LPOP', ids)
    if redis.call('LLEN', ids) == 0 then
      redis.call('DEL', ids)
      redis.call('SREM', KEYS[5], ids)
    end
  end
  redis.call('XDEL', KEYS[2], first[1])
end
redis.call('SADD', KEYS[4], ARGV[4])
return 1
"""
#: KEYS: the scope's stream, its callers, its epoch, the scopes set; ARGV: the scope.
_FORGET = """
for _, ids in ipairs(redis.call('SMEMBERS', KEYS[2])) do redis.call('DEL', ids) end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('INCR', KEYS[3])
redis.call('SREM', KEYS[4], ARGV[1])
return 1
"""
_log = logging.getLogger("tool_selector.learn")


class _Open(LearningUnavailable):
    """The breaker is open: Redis was not asked."""


@dataclass(slots=True)
class _Read:
    """What this replica read of a scope: the epoch, the last stream entry, the records."""

    log: ScopeLog
    epoch: int = 0
    last: str = "0-0"


class RedisStore:
    """See the module. Thread-safe (redis-py's pool; the read cache under a lock)."""

    def __init__(
        self,
        url: str,
        bounds: Bounds,
        *,
        timeout: float = 0.5,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        try:
            import redis  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - redis is a runtime dependency
            raise MissingDependencyError("redis", "pip install redis") from exc
        self._client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, max_connections=32
        )
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        #: What says Redis cannot be reached (the breaker's business); an error it answers
        #: (out of memory, a script's) is the call's alone, and so is this client's own pool
        #: running out of connections.
        self._unreachable: tuple[type[BaseException], ...] = (
            redis.ConnectionError,
            redis.TimeoutError,
            OSError,
        )
        self._local: tuple[type[BaseException], ...] = (redis.exceptions.MaxConnectionsError,)
        self.bounds = bounds
        self.breaker = breaker or CircuitBreaker(threshold=1, reset_after=1.0)
        self._add = self._client.register_script(_ADD)
        self._forget = self._client.register_script(_FORGET)
        self._read: dict[str, _Read] = {}
        self._lock = threading.Lock()

    def remember(self, search: Shown) -> None:
        try:
            self._call(
                lambda: self._client.set(
                    _key("search", search.id), ENCODE(search), ex=int(self.bounds.ttl)
                )
            )
        except _Open:
            pass  # said once, when the breaker opened
        except LearningUnavailable as exc:
            _log.warning("learning redis: search not remembered: %s", exc.detail)

    def recall(self, search_id: str) -> Shown | None:
        raw = self._call(lambda: self._client.get(_key("search", search_id)))
        return None if raw is None else SHOWN.decode(raw)

    def add(self, scope: str, record: Called) -> bool:
        ids = hashlib.blake2b(f"{scope}\x00{record.search.caller}".encode(), digest_size=12)
        keys = [
            _key("claim", record.search.id),
            _key("events", scope),
            _key("ids", ids.hexdigest()),
            PREFIX + "scopes",
            _key("callers", scope),
        ]
        bounds = self.bounds
        args: list[bytes | int | str] = [
            ENCODE(record), bounds.max_events, bounds.per_caller, scope, int(bounds.ttl)
        ]  # fmt: skip
        return bool(self._call(lambda: self._add(keys=keys, args=args)))

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        with self._lock:
            read = self._read.get(scope)
            if read is None:
                read = self._read[scope] = _Read(ScopeLog(self.bounds))
            try:
                self._call(lambda: self._catch_up(scope, read))
            except _Open:
                pass
            except LearningUnavailable as exc:
                _log.warning("learning redis: serving the last read of a scope: %s", exc.detail)
            return (read.epoch, read.last), read.log.records

    def _catch_up(self, scope: str, read: _Read) -> None:
        """Read the scope's entries after ``read.last`` (all of them after a ``forget``), kept
        as the stream keeps them (``ScopeLog``: an entry the stream dropped since it was read
        is dropped here by the same rule)."""
        epoch = int(self._client.get(_key("epoch", scope)) or 0)
        if epoch != read.epoch:
            read.epoch, read.last, read.log = epoch, "0-0", ScopeLog(self.bounds)
        entries: Any = self._client.xrange(_key("events", scope), min=f"({read.last}", max="+")
        for entry_id, fields in entries or ():
            read.log.add(CALLED.decode(fields[b"r"]))
            read.last = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)

    def forget(self, scope: str) -> None:
        keys = [_key("events", scope), _key("callers", scope), _key("epoch", scope)]
        self._call(lambda: self._forget(keys=[*keys, PREFIX + "scopes"], args=[scope]))
        with self._lock:
            self._read.pop(scope, None)

    def scopes(self) -> list[str]:
        members = self._call(lambda: self._client.smembers(PREFIX + "scopes"))
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    def close(self) -> None:
        self._client.close()

    def _call(self, op: Callable[[], Any]) -> Any:
        """``op`` against Redis; its failure, or the breaker open, as ``LearningUnavailable``
        (a 503)."""
        if not self._allowed():
            raise _Open(
                "learning_unavailable", "learning store: unreachable (circuit breaker open)"
            )
        try:
            result = op()
        except self._errors as exc:
            if isinstance(exc, self._local):
                pass
            elif isinstance(exc, self._unreachable):
                self.breaker.failure()
            else:  # Redis answered: it can be reached (a probe's answer closes the breaker)
                self.breaker.success()
            raise LearningUnavailable("learning_unavailable", f"learning store: {exc}") from exc
        self.breaker.success()
        return result

    def _allowed(self) -> bool:
        """Whether a call may reach Redis now: the breaker closed, or open long enough that
        this call is the probe (``try_probe``: the calls beside it skip)."""
        return self.breaker.allow() or self.breaker.try_probe()


def _key(kind: str, name: str) -> str:
    return f"{PREFIX}{kind}:{name}"
