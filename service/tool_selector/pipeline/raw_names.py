"""Recent tool lists' bytes beside their names: a list resent byte for byte is named, and
found in its body, without hashing or scanning it again.

A proxy resends the same deferred tools on every model turn. ``RawNames.name`` gives a list
the name the decoder gives it (``raw:<contract>:<sha1>``) from a held copy of the same bytes
(a copy and a compare, an order cheaper than the hash: docs/performance.md), else by
hashing. ``RawNames.resent`` finds a held list in a new body at the place its ``"tools"``
key points to, by the bytes alone: the decoder then reads that body's other fields without
the list (``decoding.Decoder``), and checks that the place was the top-level ``tools``. Only a
list whose arrays and objects nest at most ``SHALLOW`` deep is found so (measured when the
list is first named, ``json_depth``): a list deep enough to come near the JSON decoder's own
limit (which counts the stack) is decoded whole each time, so its error is what it was. A
list whose tools fail their checks fails them alike either way: its tools are decoded from
the same bytes. A list that held a lone surrogate escape is held as the decoder rewrote it,
so it is never found in a body (decoded whole, as before). Equal bytes or a hash: never a
name by a partial match.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict

import msgspec
import numpy as np

from tool_selector.lru import BoundedLRU

_Probe = tuple[str, int, bytes, bytes]
_Lists = tuple[tuple[bytes, str], ...]
#: Lists held under one probe at most.
_PER_PROBE = 4
#: How many bytes of each end of a list pick the held copy its bytes are compared with.
_ENDS = 64
#: What a held list costs besides its bytes: its probe's two ends, its name, the map's node.
_OVERHEAD = 512
#: Lists ``resent`` can find, the least recently named or found dropped first (about 2.5 MB
#: of probes at most besides the held bytes), and the names whose depth is known (a name
#: dropped is measured again when next named).
_PROBES, _NAMES = 4096, 8192
#: The deepest nesting of a list ``resent`` finds (the decoder's limit is near 1,000 frames).
SHALLOW = 64
#: Where a body's tool list starts, as a proxy writes it (checked by the decoder after).
_TOOLS_KEY = re.compile(rb'"tools"\s*:\s*')


class RawNames:
    """The names of recently sent tool lists, each kept with its bytes (at most ``capacity``
    bytes in all, the least recent dropped first); ``capacity`` 0 holds nothing and hashes
    every list."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        #: Per probe, the lists held under it (``_PER_PROBE`` at most: lists of the same
        #: length and ends, edited in the middle, sent in turn), each with its name.
        self._held: BoundedLRU[_Probe, _Lists] = BoundedLRU(capacity, _weight)
        #: Per name, whether the list nests at most ``SHALLOW`` deep.
        self._shallow: BoundedLRU[str, bool] = BoundedLRU(_NAMES)
        #: The probes ``resent`` looks at, by first bytes, and in the order they were used.
        self._starts: dict[bytes, set[_Probe]] = {}
        self._order: OrderedDict[_Probe, None] = OrderedDict()
        self._lock = threading.Lock()

    def name(self, contract: str, raw: msgspec.Raw | bytes) -> str:
        """``raw:<contract>:<sha1 of raw>``, from a held copy of the same bytes or hashed."""
        if not self._capacity:
            return raw_name(contract, raw)
        data = bytes(raw)
        probe = (contract, len(data), data[:_ENDS], data[-_ENDS:])
        lists = self._held.get(probe) or ()
        name = next((n for b, n in lists if b == data), None)
        if name is None:
            name = raw_name(contract, data)
            held = (*lists[len(lists) + 1 - _PER_PROBE :], (data, name))
            while len(held) > 1 and _weight(held) > self._capacity:
                held = held[1:]  # the newest kept, the oldest dropped, within the bytes
            self._held.put(probe, held)
        shallow = self._shallow.get(name)
        if shallow is None:
            shallow = json_depth(data) <= SHALLOW
            self._shallow.put(name, shallow)
        if shallow:
            self._index(probe)  # found from the next request on, though the index dropped it
        return name

    def resent(self, body: bytes) -> list[tuple[int, bytes, str, str]]:
        """The shallow held lists whose bytes ``body`` holds where its first ``"tools"`` key
        points: ``(where it starts, its bytes, its name, its contract)`` (the same bytes may
        be held under both contracts). Only the bytes are compared: whether that place is
        the top-level ``tools`` is the decoder's to check."""
        key = _TOOLS_KEY.search(body) if self._capacity else None
        if key is None:
            return []
        start, found = key.end(), []
        with self._lock:
            probes = list(self._starts.get(body[start : start + _ENDS], ()))
        for probe in probes:
            contract, size, _, last = probe
            if body[start + size - _ENDS : start + size] != last:
                continue
            for data, name in self._held.get(probe) or ():
                if body.startswith(data, start) and self._shallow.get(name):
                    self._index(probe)
                    found.append((start, data, name, contract))
        return found

    def _index(self, probe: _Probe) -> None:
        with self._lock:
            self._order[probe] = None
            self._order.move_to_end(probe)
            self._starts.setdefault(probe[2], set()).add(probe)
            while len(self._order) > _PROBES:
                old, _ = self._order.popitem(last=False)
                same = self._starts[old[2]]
                same.discard(old)
                if not same:
                    del self._starts[old[2]]


def json_depth(data: bytes | memoryview) -> int:
    """How deep the arrays and objects of JSON bytes nest (strings skipped: a quote is a
    string's edge unless an odd run of backslashes comes before it)."""
    b = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(b == 34)
    after = quotes[(quotes > 0) & (b[np.maximum(quotes - 1, 0)] == 92)]
    if len(after):  # a quote is escaped by an odd run of backslashes right before it
        slashes = np.flatnonzero(b == 92).astype(np.int32)
        first = np.ones(len(slashes), dtype=bool)  # where each run of backslashes begins
        first[1:] = np.diff(slashes) != 1
        runs = np.where(first, np.arange(len(slashes), dtype=np.int32), 0)
        begins = slashes[np.maximum.accumulate(runs)]
        run = after - begins[np.searchsorted(slashes, after - 1)]
        edge = np.ones(len(quotes), dtype=bool)
        edge[np.searchsorted(quotes, after[run % 2 == 1])] = False
        quotes = quotes[edge]
    brackets = np.flatnonzero((b == 91) | (b == 93) | (b == 123) | (b == 125))
    outside = np.searchsorted(quotes, brackets) % 2 == 0  # an even count of edges before
    kept = b[brackets[outside]]
    step = np.where((kept == 91) | (kept == 123), 1, -1)
    return int(np.cumsum(step).max(initial=0))


def raw_name(contract: str, data: bytes | msgspec.Raw) -> str:
    """The name of a tool list by its bytes."""
    return f"raw:{contract}:{hashlib.sha1(data, usedforsecurity=False).hexdigest()}"


def _weight(lists: _Lists) -> int:
    return sum(len(data) + _OVERHEAD for data, _ in lists)
