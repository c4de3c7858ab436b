"""The learner's store on one replica's disk (``TOOL_SELECTOR_LEARN_DIR``).

Records are MessagePack, each behind its 4-byte length. A feedback is appended and synced
to the disk (``fdatasync``; a scope's new file, its folder too) before it is acknowledged, so
an acknowledged feedback survives a restart and a crash of the machine; a search is appended
without a sync (one lost in a crash only makes its feedback a 404). Rewrites are synced, then
renamed over the old file, then the folder synced; a rewrite a crash cut short leaves a
``.tmp`` that the next start deletes:

- ``searches.bin``: remembered searches (``Shown``), rewritten from the ones still kept
  (``max_searches`` at most, none older than the search TTL) once it holds twice as many
  (``REWRITE_FLOOR`` at least): the file stays near what a search TTL of traffic needs,
  not twice ``max_searches`` (735 MB at the default 200,000: more than its volume). The
  rewrite runs on a thread of its own (``Rewrite``), not in the search that crossed the
  line: 100,000 searches took half a second to write and sync (``loadtests.remember``),
  which that search, and every search waiting to be remembered meanwhile, spent. Searches
  remembered while it writes are appended to the old file and to the new one before it
  replaces the old;
- ``scopes/<sha256 of the scope, 16 hex>.bin``: the scope's name, then its feedback
  (``Called``), rewritten to the records kept once it holds half as many again (and
  ``REWRITE_SLACK`` more), so all files hold about 1.5 times what all scopes keep; each
  feed stamps the file with a time later than every other's; ``forget`` deletes the file,
  and so does a scope dropped whole to keep ``max_total``.
- ``claims.bin``: each feedback's claim (its search's id and when), appended after its
  record without a sync of its own: the record, synced, holds the claim until it leaves its
  scope's file (trimmed at a rewrite, forgotten, dropped), and the file is synced first. So
  a search keeps its claim across a restart while it is remembered, as in memory and in
  Redis (whose claims live the search TTL), and a second feedback on it stays a repeat.
  Rewritten from the claims still held (none older than the search TTL) once it holds twice
  as many (``REWRITE_FLOOR`` at least); one that cannot be appended to (or synced) is
  rewritten whole before a record leaves. One that can be neither appended to nor rewritten
  (a full disk) holds a scope's rewrite back, its trimmed records kept in the file, until it
  can; an explicit delete (``forget``, a scope dropped whole to keep ``max_total``) goes
  ahead all the same, as deleting must: a search of that scope still remembered may then
  take a second feedback after a restart.

At start every file is read into a ``MemoryStore``, which answers the reads, scopes in the
order they were last fed (the files' stamps: past ``max_total``, lowered since, the least
recently fed go, as they would have); a record cut short by a crash mid-write is cut off
its file at the next start, and an append that fails part way (a full disk) is cut back off
at once, so no later append lands behind a cut record.
One replica only: replicas that share evidence use ``RedisStore``. One process, too, but
for granian's ``SIGHUP`` respawn, when two own the folder for a few seconds with no lock
between them (what that can lose: docs/learning.md, "What is kept"). Searches and feedback
take locks of their own: a scope's rewrite (a feedback's) never holds up a search.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO

import msgspec

from tool_selector.errors import ConfigError, LearningUnavailable
from tool_selector.learning.records import CALLED, ENCODE, SHOWN, Called, Shown, decoded
from tool_selector.learning.store import Bounds, Clock, MemoryStore, OnDrop

_LENGTH = struct.Struct(">I")
#: Records ``searches.bin`` may hold before it is rewritten, however few are kept.
REWRITE_FLOOR = 1024
#: Records a scope's file may hold beyond 1.5 times the ones kept before it is rewritten.
REWRITE_SLACK = 8
_log = logging.getLogger("tool_selector.learn")
_SCOPE_NAME = msgspec.msgpack.Decoder(str)
_CLAIM = msgspec.msgpack.Decoder(tuple[str, float])
#: Runs a rewrite of ``searches.bin``: on a thread of its own (``_on_a_thread``); a test may
#: run it at once, or hold it.
Rewrite = Callable[[Callable[[], None]], None]


def _on_a_thread(job: Callable[[], None]) -> None:
    threading.Thread(target=job, name="learn-searches-rewrite", daemon=True).start()


class DirStore:
    """See the module. Thread-safe."""

    def __init__(
        self,
        folder: Path,
        bounds: Bounds,
        clock: Clock = time.time,
        on_drop: OnDrop | None = None,
        rewrite: Rewrite = _on_a_thread,
    ) -> None:
        try:
            (folder / "scopes").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"TOOL_SELECTOR_LEARN_DIR={str(folder)!r}: {exc.strerror}") from exc
        self.folder, self.bounds, self._on_drop = folder, bounds, on_drop
        self._memory = MemoryStore(bounds, clock, self._dropped)
        self._lock = threading.Lock()  # the scopes' files
        self._searches_lock = threading.RLock()  # searches.bin (a rewrite run at once re-enters)
        self._rewrite = rewrite
        #: While ``searches.bin`` is rewritten: the records appended since its snapshot.
        self._pending: list[bytes] | None = None
        self._closed = False
        self._counts: dict[str, int] = {}
        self._searches = 0
        self._stamp = 0  # the newest scope file's time, in ns: each feed stamps a later one
        self._clock = clock
        #: Records ``claims.bin`` holds, and whether it holds every claim (an append failed).
        self._claimed, self._claims_whole, self._loading = 0, True, True
        self._load()

    def _load(self) -> None:
        cuts = ("searches.tmp", "claims.tmp")
        for cut in (*(self.folder / c for c in cuts), *(self.folder / "scopes").glob("*.tmp")):
            with contextlib.suppress(OSError):  # a rewrite cut short; a read-only folder
                cut.unlink(missing_ok=True)
        for search in decoded(_records(self.folder / "searches.bin"), SHOWN.decode):
            self._memory.remember(search)
            self._searches += 1
        claims = dict(decoded(_records(self._claims_path), _CLAIM.decode))
        self._claimed = len(claims)
        for stamp, _, path in sorted((*_fed(p), p) for p in (self.folder / "scopes").glob("*.bin")):
            self._stamp = max(self._stamp, stamp)
            self._load_scope(path, claims)
        self._load_claims(claims)

    def _load_scope(self, path: Path, claims: dict[str, float]) -> None:
        """A scope's file read into memory, the claims of its records that ``claims`` (the
        file's) lacks appended first: kept before the file was, or their append lost."""
        records = list(_records(path))
        names = list(decoded(records[:1], _SCOPE_NAME.decode))
        if not names:
            return
        fed = list(decoded(records[1:], CALLED.decode))
        missing = {r.search.id: r.search.at for r in fed if r.search.id not in claims}
        claims.update(missing)
        self._note_claims(missing.items())
        for called in fed:
            self._memory.add(names[0], called)
        self._counts[names[0]] = len(records) - 1

    def _load_claims(self, claims: dict[str, float]) -> None:
        """The claims whose records are gone (their searches may still be remembered)
        claimed again; ``claims.bin`` rewritten when it holds too many, or misses some."""
        now, ttl = self._clock(), self.bounds.ttl
        for search_id, at in claims.items():
            if now - at <= ttl and not self._memory.claimed(search_id):
                self._memory.claim(search_id, at)
        self._loading = False
        if self._claims_whole:
            self._claims_due()
        else:
            self._rewrite_claims()

    @property
    def _claims_path(self) -> Path:
        return self.folder / "claims.bin"

    def _note_claims(self, claims: Iterable[tuple[str, float]]) -> None:
        """(Under the scopes' lock.) ``claims`` appended to ``claims.bin``, unsynced (the
        module); when they cannot be, the file is rewritten whole before a record leaves."""
        payloads = [ENCODE(c) for c in claims]
        if not payloads:
            return
        try:
            _append(self._claims_path, payloads)
            self._claimed += len(payloads)
        except OSError as exc:
            _log.warning("learning folder: claims not appended: %s", exc.strerror)
            self._claims_whole = False

    def _claims_due(self) -> None:
        """(Under the scopes' lock.) ``claims.bin`` rewritten once it holds twice the claims
        held (``REWRITE_FLOOR`` at least)."""
        if self._claimed > 2 * max(self._memory.claim_count(), REWRITE_FLOOR):
            self._rewrite_claims()

    def _keep_claims(self) -> bool:
        """(Under the scopes' lock.) Whether every claim is on the disk, as it must be before
        a record leaves its scope's file: ``claims.bin`` synced, or rewritten whole if an
        append failed (not while the folder is read at start: the file's own claims are not
        held yet; the start rewrites it once they are). A sync that fails leaves the file
        to be rewritten whole next time (what it held may not be on the disk)."""
        if not self._claims_whole and not self._loading:
            return self._rewrite_claims()
        try:
            _sync_file(self._claims_path)
        except OSError as exc:
            _log.warning("learning folder: claims.bin not synced: %s", exc.strerror)
            self._claims_whole = False
            return False
        return True

    def _rewrite_claims(self) -> bool:
        """``claims.bin`` made of the claims held (none older than the search TTL), and
        whether it was; failing, tried again after as many claims (or before the next
        record leaves)."""
        kept = self._memory.claims()
        try:
            _replace(self._claims_path, [ENCODE(c) for c in kept])
            self._claims_whole = True
        except OSError as exc:
            _log.warning("learning folder: claims.bin not rewritten: %s", exc.strerror)
        self._claimed = len(kept)
        return self._claims_whole

    def remember(self, search: Shown) -> None:
        payload = ENCODE(search)
        with self._searches_lock:
            _append(self.folder / "searches.bin", [payload])
            self._searches += 1
            self._memory.remember(search)
            if self._pending is not None:
                self._pending.append(payload)
            elif self._searches > 2 * max(self._memory.kept(), REWRITE_FLOOR):
                self._hand_over()

    def _hand_over(self) -> None:
        """(Under the searches' lock.) The kept searches' rewrite handed over, with its own
        list of the searches remembered meanwhile; one that cannot be handed over (no
        thread to start) leaves nothing pending and waits for as many searches again."""
        kept, mine = self._memory.remembered(), list[bytes]()
        self._pending = mine
        try:
            self._rewrite(lambda: self._rewrite_searches(kept, mine))
        except Exception:
            _log.warning("learning folder: searches.bin rewrite not started", exc_info=True)
            if self._pending is mine:
                self._pending, self._searches = None, len(kept)

    def recall(self, search_id: str) -> Shown | None:
        return self._memory.recall(search_id)

    def claimed(self, search_id: str) -> bool:
        return self._memory.claimed(search_id)

    def add(self, scope: str, record: Called) -> bool:
        """Keep ``record`` (false: its search has feedback); ``LearningUnavailable`` when the
        folder cannot be written (nothing kept nor claimed)."""
        with self._lock:
            if self._memory.claimed(record.search.id):
                return False
            path = self._path(scope)
            fresh = _empty(path)  # an append cut back to nothing left an empty file
            try:
                _append(
                    path,
                    [ENCODE(scope), ENCODE(record)] if fresh else [ENCODE(record)],
                    synced=True,
                )
                if fresh:
                    _sync_folder(path.parent)
                self._stamped(path)
            except OSError as exc:
                raise LearningUnavailable(
                    "learning_unavailable", f"learning folder: {exc.strerror}"
                ) from exc
            self._note_claims([(record.search.id, self._clock())])
            self._memory.add(scope, record)
            self._counts[scope] = self._counts.get(scope, 0) + 1
            if self._counts[scope] > 1.5 * self._memory.size(scope) + REWRITE_SLACK:
                self._compact(scope)
            self._claims_due()
            return True

    def _compact(self, scope: str) -> None:
        """The scope's file rewritten from the records kept; one that cannot be (a full
        disk) is said and tried again after as many feedbacks: the feedback at hand is kept
        and claimed already, and the file still holds every record kept."""
        try:
            self._rewrite_scope(scope)
        except OSError as exc:
            _log.warning("learning folder: a scope's file not rewritten: %s", exc.strerror)
            self._counts[scope] = self._memory.size(scope)

    def _stamped(self, path: Path) -> None:
        """Give ``path`` a time later than every scope file's: the order scopes were fed in,
        kept across a restart (file times alone tie for feeds a few ms apart)."""
        self._stamp = max(time.time_ns(), self._stamp + 1)
        os.utime(path, ns=(self._stamp, self._stamp))

    def events(self, scope: str) -> tuple[object, Sequence[Called]]:
        return self._memory.events(scope)

    def recent(self, scope: str, caller: str, count: int) -> Sequence[Called]:
        return self._memory.recent(scope, caller, count)

    def forget(self, scope: str) -> None:
        with self._lock:
            self._keep_claims()
            self._path(scope).unlink(missing_ok=True)
            self._counts.pop(scope, None)
            self._memory.forget(scope)

    def scopes(self) -> list[str]:
        return self._memory.scopes()

    def close(self) -> None:
        """Nothing held open: every write opens, appends and closes its file. A rewrite of
        ``searches.bin`` under way renames nothing once closed (another store may own the
        folder next): the old file holds every search."""
        with self._searches_lock:
            self._closed = True

    def _dropped(self, scope: str) -> None:
        """The memory dropped ``scope`` whole (``max_total``): its file goes too (one that
        cannot be deleted is said, and read again at the next start)."""
        self._keep_claims()
        try:
            self._path(scope).unlink(missing_ok=True)
        except OSError as exc:
            _log.warning("learning folder: a dropped scope's file stays: %s", exc.strerror)
        self._counts.pop(scope, None)
        if self._on_drop is not None:
            self._on_drop(scope)

    def _path(self, scope: str) -> Path:
        name = hashlib.sha256(scope.encode()).hexdigest()[:16]
        return self.folder / "scopes" / f"{name}.bin"

    def _rewrite_scope(self, scope: str) -> None:
        """The scope's file made of the records kept; an ``OSError`` (the file untouched)
        when it cannot be, or when the claims of the records it would trim are on no disk."""
        if not self._keep_claims():
            raise OSError(errno.EAGAIN, "claims.bin not written, the records trimmed wait")
        kept = self._memory.events(scope)[1]
        _replace(self._path(scope), [ENCODE(scope), *(ENCODE(r) for r in kept)])
        self._stamped(self._path(scope))
        self._counts[scope] = len(kept)

    def _rewrite_searches(self, kept: list[Shown], mine: list[bytes]) -> None:
        """``searches.bin`` made of ``kept`` (the searches remembered when it was due), then
        of those remembered since (``mine``), written and synced apart from the searches'
        lock but for those last ones and the rename. Failing (or the store closed), the old
        file stays, the new one goes, and the next try waits for as many searches again."""
        path = self.folder / "searches.bin"
        tmp, done = path.with_suffix(".tmp"), False
        try:
            with tmp.open("wb") as f:
                _write_synced(f, map(ENCODE, kept))
                with self._searches_lock:
                    if self._pending is mine and not self._closed:
                        _write_synced(f, mine)
                        tmp.replace(path)
                        self._searches, self._pending, done = len(kept) + len(mine), None, True
        except Exception as exc:
            why = exc.strerror if isinstance(exc, OSError) else repr(exc)
            _log.warning("learning folder: searches.bin not rewritten: %s", why)
        finally:
            if not done:
                with self._searches_lock:
                    tmp.unlink(missing_ok=True)
                    if self._pending is mine:
                        self._pending, self._searches = None, len(kept)
        if done:
            _sync_folder(self.folder)  # the rename, on the disk


def _fed(path: Path) -> tuple[int, str]:
    """When the scope file was last written (fed), then its name (a stable order)."""
    return path.stat().st_mtime_ns, path.name


def _empty(path: Path) -> bool:
    """Whether ``path`` is missing or holds nothing."""
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


def _append(path: Path, payloads: Sequence[bytes], synced: bool = False) -> None:
    """``payloads`` each behind its length at the end of ``path`` (made when missing), whole
    or not at all: a write that fails part way (a full disk), or its sync (``synced``), is
    cut back off the file, so a later append does not land behind a cut record (the next
    start would read it as that record's rest)."""
    data = memoryview(b"".join(_LENGTH.pack(len(p)) + p for p in payloads))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(fd, data) :]
            if synced:
                os.fdatasync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def _write_synced(f: IO[bytes], payloads: Iterable[bytes]) -> None:
    """``payloads`` each behind its length, flushed and synced to the disk."""
    f.writelines(_LENGTH.pack(len(p)) + p for p in payloads)
    f.flush()
    os.fsync(f.fileno())


def _replace(path: Path, payloads: Sequence[bytes]) -> None:
    """Write ``payloads`` to ``path`` whole (a new file renamed over the old one; failing,
    the old file stays and the new one goes)."""
    tmp = path.with_suffix(".tmp")
    try:
        with tmp.open("wb") as f:
            _write_synced(f, payloads)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_file(path: Path) -> None:
    """What was appended to ``path`` synced to the disk (nothing when it is missing)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    """Sync ``folder``'s entries (a file made or renamed there) to the disk; a system that
    cannot open a folder to sync it is left to its own flush."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _records(path: Path) -> list[bytes]:
    """The whole records of ``path`` (none when it is missing). A last record cut short (a
    crash or a full disk mid-append) is cut off the file, so the next append lands after the
    whole ones: behind the cut bytes, the next start would read it as their rest and stop
    there, losing every record appended since. A file left with no whole record goes (a
    scope's is written afresh, its name first)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    out, at = [], 0
    while at + _LENGTH.size <= len(data):
        (size,) = _LENGTH.unpack_from(data, at)
        end = at + _LENGTH.size + size
        if end > len(data):
            break
        out.append(data[at + _LENGTH.size : end])
        at = end
    if at < len(data):
        _log.warning("learning folder: %s ended in a cut record; cut off", path.name)
        try:
            if at:
                fed = path.stat()
                os.truncate(path, at)
                os.utime(path, ns=(fed.st_atime_ns, fed.st_mtime_ns))  # when it was fed
            else:
                path.unlink()
        except OSError as exc:  # read-only: the whole records are read all the same
            _log.warning("learning folder: %s not cut: %s", path.name, exc.strerror)
    return out
