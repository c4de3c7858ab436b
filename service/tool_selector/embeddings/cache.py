"""Embedding caches: a protocol, a bytes-bounded in-process LRU, a no-op, and the tiering.

Tiers (``TieredCache``): memory first, then Redis (``redis_cache.RedisCache``); Redis hits
are copied into memory, and writes go to both (Redis's off the request path).

Keys are ``sha256(model id, text-format version, tool text)``, so a changed description
is a different key (never a stale vector), and vectors from another model never mix in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from tool_selector.lru import BoundedLRU
from tool_selector.ranking.dense import FloatArray

#: Called after each lookup with (tier name, hits, misses); wired to the cache metric.
CacheObserver = Callable[[str, int, int], None]


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

    def get_many(self, keys: Sequence[bytes], dim: int) -> list[FloatArray | None]:
        """The vector of ``dim`` floats stored under each key, or ``None`` (a miss, also for
        a stored value of another width or with a float that is not finite: re-embedded and
        overwritten); never raises for backend trouble."""
        ...

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        """Store vectors; may return before they are visible (see ``flush``)."""
        ...

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until earlier ``put_many`` calls are visible; True if they are."""
        ...

    def close(self) -> None:
        """Release connections and threads."""
        ...


class NullCache:
    """Caches nothing (every lookup misses)."""

    name = "none"

    def get_many(self, keys: Sequence[bytes], dim: int) -> list[FloatArray | None]:
        return [None] * len(keys)

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        return None

    def flush(self, timeout: float = 5.0) -> bool:
        return True

    def close(self) -> None:
        return None


class MemoryCache:
    """Least-recently-used in-process cache bounded by the bytes of the vectors it holds."""

    name = "memory"

    def __init__(self, max_bytes: int, observer: CacheObserver | None = None) -> None:
        self._observer = observer
        self._items: BoundedLRU[bytes, FloatArray] = BoundedLRU(max_bytes, _nbytes)

    @property
    def size_bytes(self) -> int:
        return self._items.weight

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, keys: Sequence[bytes], dim: int) -> list[FloatArray | None]:
        """Only what ``put_many`` was given (our encoders' vectors, a shared tier's checked
        hits): a vector of another width (another model's, under a colliding key) misses."""
        out = [
            v if v is not None and v.shape == (dim,) else None for v in self._items.get_many(keys)
        ]
        if self._observer and keys:
            hits = sum(v is not None for v in out)
            self._observer(self.name, hits, len(keys) - hits)
        return out

    def flush(self, timeout: float = 5.0) -> bool:
        return True

    def close(self) -> None:
        return None

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        self._items.put_many([(key, _frozen(vec)) for key, vec in items])


def _nbytes(vec: FloatArray) -> int:
    return vec.nbytes


def _frozen(vec: FloatArray) -> FloatArray:
    stored = np.ascontiguousarray(vec, dtype=np.float32)
    stored.setflags(write=False)
    return stored


class TieredCache:
    """Memory in front of a shared tier: read memory, then the shared tier for the misses
    (one batch), and copy shared hits into memory. Writes go to both."""

    name = "tiered"

    def __init__(self, near: EmbeddingCache, far: EmbeddingCache) -> None:
        self.near = near
        self.far = far

    def get_many(self, keys: Sequence[bytes], dim: int) -> list[FloatArray | None]:
        out = self.near.get_many(keys, dim)
        missing = [i for i, v in enumerate(out) if v is None]
        if not missing:
            return out
        found = self.far.get_many([keys[i] for i in missing], dim)
        fill: list[tuple[bytes, FloatArray]] = []
        for i, vec in zip(missing, found, strict=True):
            if vec is not None:
                out[i] = vec
                fill.append((keys[i], vec))
        self.near.put_many(fill)
        return out

    def put_many(self, items: Sequence[tuple[bytes, FloatArray]]) -> None:
        self.near.put_many(items)
        self.far.put_many(items)

    def flush(self, timeout: float = 5.0) -> bool:
        return self.near.flush(timeout) and self.far.flush(timeout)

    def close(self) -> None:
        self.near.close()
        self.far.close()
