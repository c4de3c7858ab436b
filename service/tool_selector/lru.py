"""The one bounded least-recently-used map every cache of the service is built on.

Bounded by a total weight, not a count: each value weighs ``weigh(value)`` (1 by default;
tools for built catalogs, bytes for vectors). A value heavier than the whole capacity is
not stored (capacity 0 stores nothing). Thread-safe: one lock around each call, and the
batch calls take it once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _one(_: object) -> int:
    return 1


class BoundedLRU(Generic[K, V]):
    """``get`` refreshes a key; ``put`` adds or replaces; the least recent go past capacity."""

    def __init__(self, capacity: int, weigh: Callable[[V], int] = _one) -> None:
        self.capacity = capacity
        self._weigh = weigh
        self._weight = 0
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list[K]:
        """The keys held now, least recent first (a snapshot)."""
        with self._lock:
            return list(self._items)

    @property
    def weight(self) -> int:
        """The total weight held now (never above ``capacity``)."""
        return self._weight

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._get(key)

    def get_many(self, keys: Sequence[K]) -> list[V | None]:
        with self._lock:
            return [self._get(k) for k in keys]

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, replacing what was there."""
        with self._lock:
            self._put(key, value)

    def put_many(self, items: Sequence[tuple[K, V]]) -> None:
        with self._lock:
            for key, value in items:
                self._put(key, value)

    def put_new(self, key: K, value: V) -> V:
        """Store ``value`` unless ``key`` holds one already; return the one held (or
        ``value`` itself when it is too heavy to hold)."""
        with self._lock:
            held = self._get(key)
            if held is not None:
                return held
            self._put(key, value)
            return value

    def _get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def _put(self, key: K, value: V) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self._weight -= self._weigh(old)
        weight = self._weigh(value)
        if weight > self.capacity:
            return
        self._items[key] = value
        self._weight += weight
        while self._weight > self.capacity:
            _, evicted = self._items.popitem(last=False)
            self._weight -= self._weigh(evicted)
