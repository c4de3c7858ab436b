"""The learner's store in Redis (``TOOL_SELECTOR_LEARN_REDIS_URL``), shared by every replica.

Keys (prefix ``tool-selector:learn:``):

- ``search:<id>``: a remembered search (``Shown``, MessagePack), ``SET .. EX`` the search
  TTL, so any replica takes feedback for any replica's search;
- ``claim:<id>``: ``SET NX`` by the first feedback on a search (a repeat moves nothing);
- ``events:<scope>``: a stream of the scope's feedback (``Called``, and the key of its
  caller's ids); a replica reads only the entries after the last one it read;
- ``ids:<digest of scope and caller>``: the stream ids of one caller's entries in a scope,
  oldest first (emptied lists deleted; ``recent`` reads the caller's newest entries by
  them, one script, without reading the scope);
- ``callers:<scope>``: the scope's ``ids`` keys (``forget`` deletes them);
- ``epoch:<scope>``: set by ``forget`` (which deletes the stream) to the next value of
  ``epochs`` (one counter for the whole store), so every replica drops what it read of the
  scope;
- ``epochs``: that counter;
- ``generation``: a random value set (``SET NX``) by the first replica to read an empty
  store: a store emptied (its keys deleted, a Redis restarted without its data) has a new
  one, and every replica drops what it read of every scope (the counter of ``epochs``
  starts again from nothing there, so an epoch alone could be one a replica already read);
- ``scopes``: the set of scopes holding feedback;
- ``fed``: the same scopes, each scored by when it was last fed (Redis's clock);
- ``total``: the entries of every scope's stream together.

A feedback is one script (``_ADD``): the claim, the entry, then ``ScopeLog``'s rule (past its
caller's ``per_caller`` that caller's oldest entry deleted, then past ``max_events`` the
scope's oldest), so the stream holds what a replica reading it keeps, a caller flooding a
shared scope pushes out its own entries only, and a retry after a write that landed unseen
(a timeout) finds the claim; then, while ``total`` is past ``max_total``, the scope fed
least recently is dropped whole, ``DROPS`` at most a feedback (as ``forget`` drops it;
every replica drops its reading at the epoch). ``forget`` is one script too. Keys of a scope
other than the call's are named in the scripts (one Redis, not a cluster).

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
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tool_selector.embeddings.breaker import CircuitBreaker
from tool_selector.errors import LearningUnavailable, MissingDependencyError
from tool_selector.learning.records import CALLED, ENCODE, SHOWN, Called, Shown, decoded
from tool_selector.learning.store import Bounds, OnDrop, ScopeLog

PREFIX = "tool-selector:learn:"
#: Scopes whose reading a replica keeps (the least recently read go; read whole again).
READS = 10_000
#: How long a scope's epoch outlives its last bump (a scope dropped a second leaves a
#: 144-byte key for 3 hours: 1.6 MB), and how long a replica keeps a reading it has not
#: brought up to date. An epoch is a number drawn from one counter of the whole store
#: (``epochs``), never given twice: a scope whose epoch expired and is dropped again gets a
#: new one, which no replica's reading holds (a per-scope count started again from nothing
#: and gave a replica reading since the first drop its own epoch back: it kept what was
#: forgotten).
EPOCH_SECONDS = 3 * 3_600
READ_FOR = 3_600.0
#: Scopes one feedback drops at most (a store filled before the bound, or a bound lowered,
#: shrinks over the next feedbacks, not in one script that blocks Redis).
DROPS = 64
#: ``drop``: a scope dropped whole, as ``forget`` drops it: its callers' ids lists, its
#: stream, its callers, its place in ``fed`` and ``scopes``, its records off ``total``; its
#: epoch bumped. ``recount``: ``total`` and ``fed`` made again from ``scopes`` (a scope not
#: in ``fed`` scored by its stream's last entry, when it was last fed; one gone from
#: ``scopes`` taken out), when ``fed`` is missing (a store of an older version, or every
#: scope gone) or holds other scopes than ``scopes`` (a replica of an older version, in a
#: rolling update, fed a new scope or forgot one).
_LUA = """
local prefix = ARGV[1]
local scopes, fed, total = prefix .. 'scopes', prefix .. 'fed', prefix .. 'total'
local function count() return tonumber(redis.call('GET', total) or '0') end
local function drop(scope)
  local callers, stream = prefix .. 'callers:' .. scope, prefix .. 'events:' .. scope
  for _, ids in ipairs(redis.call('SMEMBERS', callers)) do redis.call('DEL', ids) end
  redis.call('DECRBY', total, redis.call('XLEN', stream))
  if count() < 0 then redis.call('SET', total, 0) end  -- fed by an older replica, uncounted
  redis.call('DEL', stream, callers)
  local epoch = redis.call('INCR', prefix .. 'epochs')  -- never the same twice
  redis.call('SET', prefix .. 'epoch:' .. scope, epoch, 'EX', ARGV[2])
  redis.call('SREM', scopes, scope)
  redis.call('ZREM', fed, scope)
end
local function recount()
  local n = 0
  for _, scope in ipairs(redis.call('SMEMBERS', scopes)) do
    local stream = prefix .. 'events:' .. scope
    if not redis.call('ZSCORE', fed, scope) then
      local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
      local at = last and tonumber(string.match(last[1], '^(%d+)')) / 1000 or 0
      redis.call('ZADD', fed, at, scope)
    end
    n = n + redis.call('XLEN', stream)
  end
  for _, scope in ipairs(redis.call('ZRANGE', fed, 0, -1)) do
    if redis.call('SISMEMBER', scopes, scope) == 0 then redis.call('ZREM', fed, scope) end
  end
  redis.call('SET', total, n)
end
if redis.call('EXISTS', fed) == 0 or redis.call('SCARD', scopes) ~= redis.call('ZCARD', fed) then
  recount()
end
"""
#: KEYS: the claim, the scope's stream, the caller's ids; ARGV: the prefix, EPOCH_SECONDS,
#: DROPS, the record, max_events, per_caller, the scope, the claim's TTL,
#: max_total (0: none). 0: a repeat; else 1 and the scopes dropped to keep max_total (the
#: least recently fed first).
_ADD = (
    _LUA
    + """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[8]) then return 0 end
local callers = prefix .. 'callers:' .. ARGV[7]
local id = redis.call('XADD', KEYS[2], '*', 'r', ARGV[4], 'k', KEYS[3])
redis.call('INCR', total)
redis.call('RPUSH', KEYS[3], id)
redis.call('SADD', callers, KEYS[3])
if redis.call('LLEN', KEYS[3]) > tonumber(ARGV[6]) then
  redis.call('DECRBY', total, redis.call('XDEL', KEYS[2], redis.call('LPOP', KEYS[3])))
end
while redis.call('XLEN', KEYS[2]) > tonumber(ARGV[5]) do
  local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
  local fields, ids = first[2], nil
  for i = 1, #fields, 2 do if fields[i] == 'k' then ids = fields[i + 1] end end
  if ids then  -- none on an entry written before the ids were kept
    redis.call('LPOP', ids)
    if redis.call('LLEN', ids) == 0 then
      redis.call('DEL', ids)
      redis.call('SREM', callers, ids)
    end
  end
  redis.call('DECRBY', total, redis.call('XDEL', KEYS[2], first[1]))
end
redis.call('SADD', scopes, ARGV[7])
local now = redis.call('TIME')
redis.call('ZADD', fed, tonumber(now[1]) + tonumber(now[2]) / 1e6, ARGV[7])
local dropped = {1}
local limit, budget = tonumber(ARGV[9]), tonumber(ARGV[3])
while limit > 0 and count() > limit and budget > 0 and redis.call('ZCARD', fed) > 1 do
  local oldest = redis.call('ZRANGE', fed, 0, 0)[1]
  if oldest == ARGV[7] then break end  -- Redis's clock went back: the scope just fed stays
  if redis.call('SISMEMBER', scopes, oldest) == 1 then
    drop(oldest)
    table.insert(dropped, oldest)
    budget = budget - 1
  else  -- an older replica forgot it and fed another: the count is off, count again
    redis.call('ZREM', fed, oldest)
    recount()
  end
end
return dropped
"""
)
#: KEYS: the scope's stream, the caller's ids; ARGV: how many. The caller's newest entries'
#: fields, oldest first (an id the stream no longer holds skipped).
_RECENT = """
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[2], -tonumber(ARGV[1]), -1)) do
  local entry = redis.call('XRANGE', KEYS[1], id, id)[1]
  if entry then table.insert(out, entry[2]) end
end
return out
"""
#: ARGV: the prefix, EPOCH_SECONDS, DROPS (unused), the scope.
_FORGET = (
    _LUA
    + """
drop(ARGV[4])
return 1
"""
)
_log = logging.getLogger("tool_selector.learn")


class _Open(LearningUnavailable):
    """The breaker is open: Redis was not asked."""


@dataclass(slots=True)
class _Read:
    """What this replica read of a scope: the epoch, the last stream entry, the records, and
    when it was last brought up to date (``time.monotonic``)."""

    log: ScopeLog
    epoch: tuple[bytes, int] = (b"", 0)
    last: str = "0-0"
    at: float = field(default_factory=time.monotonic)


class RedisStore:
    """See the module. Thread-safe (redis-py's pool; the read cache under a lock)."""

    def __init__(
        self,
        url: str,
        bounds: Bounds,
        *,
        timeout: float = 0.5,
        breaker: CircuitBreaker | None = None,
        on_drop: OnDrop | None = None,
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
        self._recent = self._client.register_script(_RECENT)
        self._on_drop = on_drop
        self._read: OrderedDict[str, _Read] = OrderedDict()  # the least recently read first
        self._held = 0  # the records of those readings
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
        return next(decoded([raw], SHOWN.decode), None) if raw is not None else None

    def claimed(self, search_id: str) -> bool:
        found = self._call(lambda: self._client.exists(_key("claim", search_id)))
        return bool(found)

    def add(self, scope: str, record: Called) -> bool:
        keys = [
            _key("claim", record.search.id),
            _key("events", scope),
            _ids(scope, record.search.caller),
        ]
        bounds = self.bounds
        args: list[bytes | int | str] = [
            PREFIX, EPOCH_SECONDS, DROPS, ENCODE(record), bounds.max_events,
            bounds.per_caller, scope, int(bounds.ttl), bounds.max_total or 0,
        ]  # fmt: skip
        answer = self._call(lambda: self._add(keys=keys, args=args))
        if not answer:
            return False
        for dropped in answer[1:]:
            name = dropped.decode() if isinstance(dropped, bytes) else str(dropped)
            self._unread(name)
            if self._on_drop is not None:
                self._on_drop(name)
        return True

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        with self._lock:
            read = self._reading(scope)
            return (read.epoch, read.last), read.log.records

    def recent(self, scope: str, caller: str, count: int) -> Sequence[Called]:
        """From the caller's ids (one script: no reading of the whole scope, no lock)."""
        keys = [_key("events", scope), _ids(scope, caller)]
        found: Any = self._call(lambda: self._recent(keys=keys, args=[count]))
        entries = (dict(zip(f[::2], f[1::2], strict=True)).get(b"r", b"") for f in found)
        return list(decoded(entries, CALLED.decode))

    def _reading(self, scope: str) -> _Read:
        """The scope's reading brought up to date (the last one while Redis cannot be
        read); under the lock."""
        kept = self._read.pop(scope, None)
        self._held -= len(kept.log) if kept else 0
        stale = kept is None or time.monotonic() - kept.at > READ_FOR
        read = _Read(ScopeLog(self.bounds)) if stale or kept is None else kept
        try:
            self._call(lambda: self._catch_up(scope, read))
        except _Open:
            read = kept or read  # the last reading, however old, while Redis is away
        except LearningUnavailable as exc:
            _log.warning("learning redis: serving the last read of a scope: %s", exc.detail)
            read = kept or read
        self._hold(scope, read)
        return read

    def _hold(self, scope: str, read: _Read) -> None:
        """Keep ``read`` as the scope's reading, the most recent; the least recently read go
        while there are more than ``READS``, or more records than ``max_total`` (read whole
        again when asked again: the store keeps no more, and neither does a replica)."""
        self._read[scope] = read
        self._held += len(read.log)
        limit = self.bounds.max_total or self._held
        while len(self._read) > 1 and (len(self._read) > READS or self._held > limit):
            self._held -= len(self._read.popitem(last=False)[1].log)

    def _catch_up(self, scope: str, read: _Read) -> None:
        """Read the scope's entries after ``read.last`` (all of them after a ``forget``), kept
        as the stream keeps them (``ScopeLog``: an entry the stream dropped since it was read
        is dropped here by the same rule)."""
        found: Any = self._client.mget(_key("epoch", scope), PREFIX + "generation")
        number, generation = found
        epoch: tuple[bytes, int] = (generation or self._generation(), int(number or 0))
        if epoch != read.epoch:
            read.epoch, read.last, read.log = epoch, "0-0", ScopeLog(self.bounds)
        entries: Any = self._client.xrange(_key("events", scope), min=f"({read.last}", max="+")
        for entry_id, fields in entries or ():
            for called in decoded([fields.get(b"r", b"")], CALLED.decode):
                read.log.add(called)
            read.last = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
        read.at = time.monotonic()

    def _generation(self) -> bytes:
        """The store's generation, set now when it has none (an empty store's first reader;
        two at once agree: the first ``SET NX`` stands)."""
        self._client.set(PREFIX + "generation", secrets.token_hex(8), nx=True)
        found: Any = self._client.get(PREFIX + "generation")
        return bytes(found or b"")

    def forget(self, scope: str) -> None:
        self._call(lambda: self._forget(keys=[], args=[PREFIX, EPOCH_SECONDS, DROPS, scope]))
        self._unread(scope)

    def _unread(self, scope: str) -> None:
        """This replica's reading of ``scope`` gone (the scope was dropped or forgotten)."""
        with self._lock:
            gone = self._read.pop(scope, None)
            self._held -= len(gone.log) if gone else 0

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


def _ids(scope: str, caller: str) -> str:
    """The key of ``caller``'s stream ids in ``scope``."""
    digest = hashlib.blake2b(f"{scope}\x00{caller}".encode(), digest_size=12)
    return _key("ids", digest.hexdigest())
