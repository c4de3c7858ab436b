"""Embedding caches: a protocol, a bytes-bounded in-process LRU, and a no-op.

Keys are ``sha256(model id, text-format version, tool text)``, so a changed description
is a different key (never a stale vector), and vectors from another model never mix in.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from tool_selector.ranking.dense import FloatArray


def embedding_key(model_id: str, text_format_version: int, text: str) -> bytes:
    """Cache key of one tool text's embedding."""
    h = hashlib.sha256()
    h.update(model_id.encode())
    h.update(b"\x00")
    h.update(str(text_format_version).encode())
    h.update(b"\x00")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.digest()


class EmbeddingCache(Protocol):
    """Stores one float32 vector per key. Implementations must be thread-safe."""

    name: str

    def get_many(self, keys: Sequence[bytes]) -> list[FloatArray | None]: ...

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None: ...


class NullCache:
    """Caches nothing (every lookup misses)."""

    name = "none"

    def get_many(self, keys: Sequence[bytes]) -> list[FloatArray | None]:
        return [None] * len(keys)

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        return None


class MemoryCache:
    """Least-recently-used in-process cache bounded by the bytes of the vectors it holds."""

    name = "memory"

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._bytes = 0
        self._items: OrderedDict[bytes, FloatArray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, keys: Sequence[bytes]) -> list[FloatArray | None]:
        out: list[FloatArray | None] = []
        with self._lock:
            for key in keys:
                vec = self._items.get(key)
                if vec is not None:
                    self._items.move_to_end(key)
                out.append(vec)
        return out

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        with self._lock:
            for key, vec in items:
                stored = np.ascontiguousarray(vec, dtype=np.float32)
                stored.setflags(write=False)
                old = self._items.pop(key, None)
                if old is not None:
                    self._bytes -= old.nbytes
                if stored.nbytes > self._max_bytes:
                    continue
                self._items[key] = stored
                self._bytes += stored.nbytes
                while self._bytes > self._max_bytes:
                    _, evicted = self._items.popitem(last=False)
                    self._bytes -= evicted.nbytes
