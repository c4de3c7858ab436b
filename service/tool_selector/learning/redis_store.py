"""The learner's store in Redis (``TOOL_SELECTOR_LEARN_REDIS_URL``), shared by every replica.

Keys (prefix ``tool-selector:learn:``):

- ``search:<id>``: a remembered search (``Shown``, MessagePack), ``SET .. EX`` the search
  TTL, so any replica takes feedback for any replica's search;
- ``claim:<id>``: ``SET NX`` by the first feedback on a search (a repeat moves nothing);
- ``events:<scope>``: a stream of the scope's feedback (``Called``), ``XADD .. MAXLEN ~``;
  a replica reads only the entries after the last one it read;
- ``ids:<scope>:<caller>``: the stream ids of one caller's entries, oldest first; past
  ``per_caller`` its oldest entry is deleted from the stream (one script, ``_ADD``), so a
  caller flooding a shared scope pushes out its own entries, not the others';
- ``callers:<scope>``: the scope's ``ids`` keys (``forget`` deletes them);
- ``epoch:<scope>``: bumped by ``forget`` (which deletes the stream), so every replica drops
  what it read of the scope;
- ``scopes``: the set of scopes holding feedback.

The evidence must not be evicted nor lost on a restart: this Redis is not the embedding
cache's (an LRU without persistence) but one with an append-only file and
``maxmemory-policy noeviction`` (``deploy/k8s/components/learn-redis``). A write that fails raises
``LearningUnavailable`` (the feedback answers 503, not 2xx); a read that fails serves what
the replica read last.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tool_selector.errors import LearningUnavailable, MissingDependencyError
from tool_selector.learning.records import CALLED, ENCODE, SHOWN, Called, Shown
from tool_selector.learning.store import Bounds, ScopeLog

PREFIX = "tool-selector:learn:"
#: KEYS: the scope's stream, the caller's ids, the scopes set, the scope's callers set; ARGV:
#: the record, max_events, per_caller, the scope.
_ADD = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'r', ARGV[1])
redis.call('RPUSH', KEYS[2], id)
while redis.call('LLEN', KEYS[2]) > tonumber(ARGV[3]) do
  redis.call('XDEL', KEYS[1], redis.call('LPOP', KEYS[2]))
end
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('SADD', KEYS[4], KEYS[2])
return id
"""
_log = logging.getLogger("tool_selector.learn")


@dataclass(slots=True)
class _Read:
    """What this replica read of a scope: the epoch, the last stream entry, the records."""

    log: ScopeLog
    epoch: int = 0
    last: str = "0-0"


class RedisStore:
    """See the module. Thread-safe (redis-py's pool; the read cache under a lock)."""

    def __init__(self, url: str, bounds: Bounds, *, timeout: float = 0.5) -> None:
        try:
            import redis  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - redis is a runtime dependency
            raise MissingDependencyError("redis", "pip install redis") from exc
        self._client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, max_connections=32
        )
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self.bounds = bounds
        self._add = self._client.register_script(_ADD)
        self._read: dict[str, _Read] = {}
        self._lock = threading.Lock()

    def remember(self, search: Shown) -> None:
        try:
            self._client.set(_key("search", search.id), ENCODE(search), ex=int(self.bounds.ttl))
        except self._errors as exc:
            _log.warning("learning redis: search not remembered: %s", exc)

    def recall(self, search_id: str) -> Shown | None:
        raw = self._call(lambda: self._client.get(_key("search", search_id)))
        return None if raw is None else SHOWN.decode(raw)

    def claim(self, search_id: str) -> bool:
        key, ttl = _key("claim", search_id), int(self.bounds.ttl)
        return bool(self._call(lambda: self._client.set(key, b"1", nx=True, ex=ttl)))

    def release(self, search_id: str) -> None:
        self._call(lambda: self._client.delete(_key("claim", search_id)))

    def add(self, scope: str, record: Called) -> None:
        keys = [
            _key("events", scope),
            _key("ids", f"{scope}:{record.search.caller}"),
            PREFIX + "scopes",
            _key("callers", scope),
        ]
        args: list[bytes | int | str] = [
            ENCODE(record),
            self.bounds.max_events,
            self.bounds.per_caller,
            scope,
        ]
        self._call(lambda: self._add(keys=keys, args=args))

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        with self._lock:
            read = self._read.get(scope)
            if read is None:
                read = self._read[scope] = _Read(ScopeLog(self.bounds))
            try:
                self._catch_up(scope, read)
            except self._errors as exc:
                _log.warning("learning redis: serving the last read of a scope: %s", exc)
            return (read.epoch, read.last), tuple(read.log.records)

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
        def write() -> object:
            callers = self._client.smembers(_key("callers", scope))
            with self._client.pipeline(transaction=True) as pipe:
                pipe.delete(_key("events", scope), _key("callers", scope), *callers)
                pipe.incr(_key("epoch", scope))
                pipe.srem(PREFIX + "scopes", scope)
                return pipe.execute()

        self._call(write)
        with self._lock:
            self._read.pop(scope, None)

    def scopes(self) -> list[str]:
        members = self._call(lambda: self._client.smembers(PREFIX + "scopes"))
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    def close(self) -> None:
        self._client.close()

    def _call(self, op: Callable[[], Any]) -> Any:
        """``op`` against Redis; its failure as ``LearningUnavailable`` (a 503)."""
        try:
            return op()
        except self._errors as exc:
            raise LearningUnavailable("learning_unavailable", f"learning store: {exc}") from exc


def _key(kind: str, name: str) -> str:
    return f"{PREFIX}{kind}:{name}"
