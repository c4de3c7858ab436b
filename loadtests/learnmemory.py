"""What learning holds, per record: ``python -m loadtests.learnmemory``.

``--records`` feedback records of one scope (20,000: a full scope at the default), each the
shape the service keeps (a 384-float MiniLM vector, twelve 8-byte term hashes, five tools
shown, one called), counted with ``tracemalloc``: in the store (``MemoryStore``: what a
replica holds of the scopes it read), in the evidence the learner builds from them, and as
remembered searches (``TOOL_SELECTOR_LEARN_DIR`` keeps them in memory too). With
``--redis URL`` (a throwaway Redis: it writes keys under the learning prefix) also the bytes
Redis's ``used_memory`` grows by per remembered search and per feedback record. The figures
behind ``TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS`` and ``TOOL_SELECTOR_LEARN_MAX_SEARCHES``
(docs/operations.md, Memory).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence

import numpy as np

from tool_selector.http.wiring import learn_rule
from tool_selector.learning.records import Called, Shown
from tool_selector.learning.store import Bounds, MemoryStore
from tool_selector.ranking.learned import Evidence
from tool_selector.settings import Settings


def made(count: int, seed: int = 0, scope: str = "scope") -> list[Shown]:
    """``count`` searches as the service remembers them (random unit vectors)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        vector = rng.standard_normal(384).astype(np.float32)
        vector /= np.linalg.norm(vector)
        terms = tuple(int(t) for t in rng.integers(0, 2**63, 12))
        tools = tuple(f"{t:016x}" for t in rng.integers(0, 2**40, 5))
        names = tuple(f"some_tool_name_{j}" for j in range(5))
        out.append(Shown(f"{seed}-{i:032x}", scope, f"caller{i % 7}", time.time(), vector.tobytes(),
                         terms, tools, names))  # fmt: skip
    return out


def traced(build: Callable[[], object]) -> tuple[object, int]:
    """What ``build`` returns and the bytes it left allocated."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        return kept, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def in_process(records: int) -> dict[str, float]:
    """Bytes a record: in the store, in the built evidence; a remembered search."""
    bounds = Bounds(7200, records, records)

    def stored() -> MemoryStore:  # the records made here: a replica decodes what it holds
        store = MemoryStore(bounds)
        for search in made(records):
            store.add("scope", Called(search, (search.tools[0],)))
        return store

    store, store_bytes = traced(stored)
    events = store.events("scope")[1]  # type: ignore[attr-defined]
    _, evidence_bytes = traced(lambda: Evidence.of(events, learn_rule(Settings()), time.time()))
    searches = made(records, seed=1)

    def remembered() -> MemoryStore:
        kept = MemoryStore(bounds)
        for search in searches:
            kept.remember(search)
        return kept

    _, search_struct = traced(lambda: made(records, seed=2))
    _, search_store = traced(remembered)
    return {
        "record in the store": store_bytes / records,
        "record's evidence": evidence_bytes / records,
        "remembered search": (search_struct + search_store) / records,
    }


def in_redis(url: str, records: int) -> dict[str, float]:
    """Bytes Redis grows by a remembered search and a feedback record."""
    from redis import Redis  # noqa: PLC0415

    from tool_selector.learning.redis_store import RedisStore  # noqa: PLC0415

    client = Redis.from_url(url)
    store = RedisStore(url, Bounds(7200, records, records, max_total=records))
    try:
        start = int(client.info("memory")["used_memory"])
        for search in made(records, seed=3):
            store.remember(search)
        searched = int(client.info("memory")["used_memory"])
        for search in made(records, seed=4, scope="learnmemory"):
            store.add(search.scope, Called(search, (search.tools[0],)))
        fed = int(client.info("memory")["used_memory"])
        store.forget("learnmemory")
    finally:
        store.close()
        client.close()
    return {
        "search in Redis": (searched - start) / records,
        "record in Redis": (fed - searched) / records,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--redis", default="", help="a throwaway Redis's URL (optional)")
    args = parser.parse_args(argv)
    if args.records < 1:
        parser.error("--records: at least 1")
    sizes = in_process(args.records)
    if args.redis:
        sizes |= in_redis(args.redis, min(args.records, 5_000))
    for what, size in sizes.items():
        print(f"{what:>22}: {size / 1000:6.2f} KB")
    given = " ".join(sys.argv[1:] if argv is None else argv)
    print(f"command: python -m loadtests.learnmemory {given}".rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
