"""What one request costs in process, without HTTP: the decode and ``select`` of a body.

``PYTHONPATH=service:. python -m loadtests.pathcost``. Warm @300 and @4,000 (the catalog
built, its matrix and the patterns' vectors cached: the open-loop bench's warm scenarios)
and cold @300 (a new catalog per request, answered from the static arm with background
embedding off). The model is replaced by the tests' hashing encoder: on these paths the query
vectors are cached, so the model's cost is not what is measured. Prints the minimum and the
median of the repeats; compare two builds by running it alternately on the same minute.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from tests.fakes import HashingEncoder
from tests.support import static_table

from loadtests import workload
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.static import StaticEncoder
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Outcome, Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import SEARCH_PATH


def timed(answer: Callable[[bytes], Outcome], bodies: list[bytes]) -> tuple[float, float, str]:
    """Minimum and median milliseconds over ``bodies``, and the path of the last answer."""
    times, path = [], ""
    for body in bodies:
        began = time.perf_counter()
        path = answer(body).path
        times.append((time.perf_counter() - began) * 1000)
    return min(times), statistics.median(times), path


def _controls_rows(
    answer: Callable[[bytes], Outcome],
    bodies: list[bytes],
    tools: list[dict[str, object]],
    rng: random.Random,
    repeats: int,
) -> list[tuple[str, float, float, str]]:
    """The same patterns without and with every caller's control (filters, budget,
    min_score, context), alternated request by request so both see the same noise; the
    p99 of each is printed beside the rows."""
    controlled = [workload.with_controls(b, tools, rng) for b in bodies]
    for body in controlled:  # the context texts' vectors cached, as in the warm bench
        answer(body)
    plain_ms: list[float] = []
    control_ms: list[float] = []
    for _ in range(repeats * 5):
        for one, other in zip(bodies, controlled, strict=True):
            for body, sink in ((one, plain_ms), (other, control_ms)):
                began = time.perf_counter()
                answer(body)
                sink.append((time.perf_counter() - began) * 1000)
    for name, ms in (("plain", plain_ms), ("every control", control_ms)):
        print(f"warm @300, {name}: p50 {statistics.median(ms):.2f} ms, p99 {p99(ms):.2f} ms")
    return [
        ("warm @300, plain (alternated)", min(plain_ms), statistics.median(plain_ms), "hybrid"),
        ("warm @300, every control", min(control_ms), statistics.median(control_ms), "hybrid"),
    ]


def p99(values: list[float]) -> float:
    """The 99th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="passes over the warm patterns")
    parser.add_argument("--cold", type=int, default=150, help="new catalogs for cold @300")
    args = parser.parse_args()
    selector = Selector(
        encoder=HashingEncoder(),
        static=StaticEncoder(static_table()),
        cache=MemoryCache(1 << 30),
        catalogs=CatalogStore(100_000),
        queries=BoundedLRU(10_000),
    )
    decoder = Decoder(Settings())

    def answer(body: bytes) -> Outcome:
        return selector.select(decoder.decode(body, SEARCH_PATH)[1])

    rng = random.Random(7)
    patterns = workload.patterns(rng, 40)
    rows = []
    for size, offset in ((300, 0), (4000, 76)):
        tools = workload.catalog(size, offset=offset)
        bodies = [workload.body(p, tools) for p in patterns]
        for body in bodies:  # build; embed inline or in the background
            answer(body)
        selector.jobs.drain(600)
        rows.append((f"warm @{size}", *timed(answer, bodies * args.repeats)))
        if size == 300:
            rows.extend(_controls_rows(answer, bodies, tools, rng, args.repeats))
    selector.jobs.close()  # cold catalogs stay unembedded: the static answer is measured
    fresh = [
        workload.body(patterns[i % len(patterns)], workload.fresh_catalog(rng, 300))
        for i in range(args.cold)
    ]
    rows.append(("cold @300", *timed(answer, fresh)))
    for name, least, median, path in rows:
        print(f"{name}: min {least:.2f} ms, median {median:.2f} ms ({path})")
    print("command: PYTHONPATH=service:. python -m loadtests.pathcost")


if __name__ == "__main__":
    main()
