"""Recent tool lists' bytes beside their names: a list resent byte for byte is named, and
found in its body, without hashing or scanning it again.

A proxy resends the same deferred tools on every model turn. ``RawNames.name`` gives a list
the name the decoder gives it (``raw:<contract>:<sha1>``) from a held copy of the same bytes
(a copy and a compare, an order cheaper than the hash: docs/performance.md), else by
hashing. ``RawNames.resent`` finds a held list in a new body at the place its ``"tools"``
key points to, by the bytes alone: the decoder then reads that body's other fields without
the list (``decoding.Decoder``), and checks that the place was the top-level ``tools``. Only a
list whose tools were decoded and checked within the limits (``RawNames.loaded``) is found
so: a list refused, or nested near the decoder's depth limit, is decoded whole each time, so
its error is what it was. Equal bytes or a hash: never a name by a partial match.
"""

from __future__ import annotations

import hashlib
import re
import threading

import msgspec

from tool_selector.lru import BoundedLRU

_Probe = tuple[str, int, bytes, bytes]
#: How many bytes of each end of a list pick the held copy its bytes are compared with.
_ENDS = 64
#: What a held list costs besides its bytes: its probe's two ends, its name, the map's node.
_OVERHEAD = 512
#: First bytes the starts index keeps and lists per first bytes, the least recently found
#: or loaded dropped first: at most 512 x 16 probes (about 2 MB besides the held bytes).
_STARTS, _PER_START = 512, 16
#: Where a body's tool list starts, as a proxy writes it (checked by the decoder after).
_TOOLS_KEY = re.compile(rb'"tools"\s*:\s*')


class RawNames:
    """The names of recently sent tool lists, each kept with its bytes (at most ``capacity``
    bytes in all, the least recent dropped first); ``capacity`` 0 holds nothing and hashes
    every list."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        #: Each list's bytes, its name, and whether its tools were loaded (``loaded``).
        self._held: BoundedLRU[_Probe, tuple[bytes, str, bool]] = BoundedLRU(capacity, _weight)
        #: The probes of the loaded lists by their first bytes (``resent``); may name lists
        #: the LRU has dropped since (then not found there).
        self._starts: dict[bytes, list[_Probe]] = {}
        self._lock = threading.Lock()

    def name(self, contract: str, raw: msgspec.Raw | bytes) -> str:
        """``raw:<contract>:<sha1 of raw>``, from a held copy of the same bytes or hashed."""
        if not self._capacity:
            return raw_name(contract, raw)
        data = bytes(raw)
        probe = (contract, len(data), data[:_ENDS], data[-_ENDS:])
        held = self._held.get(probe)
        if held is not None and held[0] == data:
            if held[2]:
                self._index(probe)  # found again next time, though the index dropped it
            return held[1]
        key = raw_name(contract, data)
        self._held.put(probe, (data, key, False))
        return key

    def loaded(self, contract: str, raw: msgspec.Raw | bytes) -> None:
        """``raw``'s tools were decoded and checked: ``resent`` may find the list now."""
        if not self._capacity:
            return
        data = memoryview(raw)
        probe = (contract, len(data), bytes(data[:_ENDS]), bytes(data[-_ENDS:]))
        held = self._held.get(probe)
        if held is not None and held[0] == data:
            self._held.put(probe, (held[0], held[1], True))
            self._index(probe)

    def resent(self, body: bytes) -> list[tuple[int, bytes, str, str]]:
        """The loaded lists whose bytes ``body`` holds where its first ``"tools"`` key
        points, most recent first: ``(where it starts, its bytes, its name, its contract)``
        (the same bytes may be held under both contracts). Only the bytes are compared:
        whether that place is the top-level ``tools`` is the decoder's to check."""
        key = _TOOLS_KEY.search(body) if self._capacity else None
        if key is None:
            return []
        start, found = key.end(), []
        with self._lock:
            probes = list(self._starts.get(body[start : start + _ENDS], ()))
        for probe in reversed(probes):
            contract, size, _, last = probe
            if body[start + size - _ENDS : start + size] != last:
                continue
            held = self._held.get(probe)
            if held is not None and held[2] and body.startswith(held[0], start):
                self._index(probe)
                found.append((start, held[0], held[1], contract))
        return found

    def _index(self, probe: _Probe) -> None:
        with self._lock:
            probes = [p for p in self._starts.pop(probe[2], []) if p != probe]
            self._starts[probe[2]] = [*probes[-(_PER_START - 1) :], probe]
            while len(self._starts) > _STARTS:
                del self._starts[next(iter(self._starts))]


def raw_name(contract: str, data: bytes | msgspec.Raw) -> str:
    """The name of a tool list by its bytes."""
    return f"raw:{contract}:{hashlib.sha1(data, usedforsecurity=False).hexdigest()}"


def _weight(held: tuple[bytes, str, bool]) -> int:
    return len(held[0]) + _OVERHEAD
