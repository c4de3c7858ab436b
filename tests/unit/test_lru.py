"""The bounded LRU and every cache built on it: one contract, run over each.

The catalog store (bounded in tools), the query-vector cache (in entries) and the in-process
embedding cache (in bytes) all hold their items in ``tool_selector.lru.BoundedLRU``; each
adapter below puts an item of a given weight in that cache's own unit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

from tool_selector.embeddings.cache import MemoryCache
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.ranking.catalog import build_catalog
from tool_selector_client.wire import Tool


class Adapter:
    """``put(key, weight)``, ``has(key)`` and ``weight()`` over one cache."""

    put: Callable[[str, int], None]
    has: Callable[[str], bool]
    weight: Callable[[], int]


def plain(capacity: int) -> Adapter:
    lru: BoundedLRU[str, int] = BoundedLRU(capacity, weigh=lambda v: v)
    a = Adapter()
    a.put = lru.put
    a.has = lambda k: lru.get(k) is not None
    a.weight = lambda: lru.weight
    return a


def catalogs(capacity: int) -> Adapter:
    store = CatalogStore(capacity)

    def put(key: str, weight: int) -> None:
        tools = [Tool(name=f"{key}_{i}", description="x") for i in range(weight)]
        store.find(ToolSource.of(tools, key), build_catalog)

    a = Adapter()
    a.put = put
    a.has = lambda k: store.get(k) is not None
    a.weight = lambda: store._entries.weight
    return a


def vectors(capacity: int) -> Adapter:
    cache = MemoryCache(capacity * 4)  # one unit of weight: one float32
    widths: dict[str, int] = {}

    def put(key: str, weight: int) -> None:
        widths[key] = weight
        cache.put_many([(key.encode(), np.ones(weight, dtype=np.float32))])

    a = Adapter()
    a.put = put
    a.has = lambda k: cache.get_many([k.encode()], widths.get(k, 0))[0] is not None
    a.weight = lambda: cache.size_bytes // 4
    return a


CACHES = [plain, catalogs, vectors]


@pytest.fixture(params=CACHES, ids=lambda f: f.__name__)
def make(request: pytest.FixtureRequest) -> Callable[[int], Adapter]:
    maker: Callable[[int], Adapter] = request.param
    return maker


def test_holds_what_fits(make: Callable[[int], Adapter]) -> None:
    cache = make(10)
    cache.put("a", 4)
    cache.put("b", 6)
    assert (cache.has("a"), cache.has("b"), cache.weight()) == (True, True, 10)


def test_evicts_the_least_recently_used_first(make: Callable[[int], Adapter]) -> None:
    cache = make(10)
    for key in "abc":
        cache.put(key, 3)
    assert cache.has("a")  # a is now more recent than b
    cache.put("d", 3)
    assert [cache.has(k) for k in "abcd"] == [True, False, True, True]


def test_the_bound_is_a_total_weight(make: Callable[[int], Adapter]) -> None:
    cache = make(10)
    cache.put("a", 2)
    cache.put("b", 9)
    assert (cache.has("a"), cache.has("b"), cache.weight()) == (False, True, 9)


def test_an_item_heavier_than_the_whole_is_not_kept_and_evicts_nothing(
    make: Callable[[int], Adapter],
) -> None:
    cache = make(10)
    cache.put("a", 5)
    cache.put("huge", 11)
    assert (cache.has("a"), cache.has("huge"), cache.weight()) == (True, False, 5)


def test_capacity_zero_keeps_nothing(make: Callable[[int], Adapter]) -> None:
    cache = make(0)
    cache.put("a", 1)
    assert (cache.has("a"), cache.weight()) == (False, 0)


def test_concurrent_writers_never_break_the_bound(make: Callable[[int], Adapter]) -> None:
    cache = make(50)

    def write(thread: int) -> None:
        for i in range(200):
            cache.put(f"{thread}-{i}", 1 + (i % 7))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 0 < cache.weight() <= 50


def test_put_new_keeps_the_first_value() -> None:
    lru: BoundedLRU[str, str] = BoundedLRU(5)
    assert (lru.put_new("k", "first"), lru.put_new("k", "second"), lru.get("k")) == (
        "first",
        "first",
        "first",
    )
