"""What remembering a search costs on the learning folder: ``python -m loadtests.remember``.

Every search of a replica with learning on and no learning Redis is remembered in
``TOOL_SELECTOR_LEARN_DIR`` (``DirStore.remember``: appended to ``searches.bin`` and kept in
memory) before it is answered. This remembers ``--searches`` searches of the shape the
service keeps (a 384-float vector, twelve term hashes, ten tools), one after another, at the
default bounds (``TOOL_SELECTOR_LEARN_SEARCH_TTL_SECONDS``, ``TOOL_SELECTOR_LEARN_MAX_SEARCHES``)
and a pace that keeps the most the bound allows, so the file comes due for its rewrite (at
twice the searches kept); then prints each remember's milliseconds (p50, p99, p99.9, the
slowest and which search it was, counted from 0), how long the rewrite itself took where it
ran apart (``DirStore``'s own thread), and one full ``gc.collect()`` with the store's
searches held.

Run the same file on an older tree (``PYTHONPATH`` of that tree's ``service``) to compare:
where ``DirStore`` takes no ``rewrite``, the rewrite runs inside the search that made it due.
In process, no HTTP; no test asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tool_selector.learning.dir_store import DirStore
from tool_selector.learning.records import Shown
from tool_selector.learning.store import Bounds
from tool_selector.settings import Settings


def searches(count: int, pace: float, seed: int = 0) -> list[Shown]:
    """``count`` searches, the ``i``-th made at ``i * pace`` seconds."""
    rng = np.random.default_rng(seed)
    names = tuple(f"mcp__server__tool_name_{i}" for i in range(10))
    ids = tuple(f"{i:016x}" for i in range(10))
    return [
        Shown(
            id=f"{i:032x}",
            scope="default",
            caller="token",
            at=i * pace,
            vector=rng.random(384, dtype=np.float32).tobytes(),
            terms=tuple(int(x) for x in rng.integers(0, 2**62, 12)),
            tools=ids,
            names=names,
        )
        for i in range(count)
    ]


class Timed:
    """``DirStore``'s rewrite on a thread of its own, as the service runs it, timed."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.threads: list[threading.Thread] = []

    def __call__(self, job: Callable[[], None]) -> None:
        def run() -> None:
            began = time.perf_counter()
            job()
            self.seconds.append(time.perf_counter() - began)

        thread = threading.Thread(target=run, name="learn-searches-rewrite")
        self.threads.append(thread)
        thread.start()


def run(count: int) -> list[str]:
    settings = Settings()
    ttl, most = settings.learn_search_ttl_seconds, settings.learn_max_searches
    bounds = Bounds(ttl=ttl, max_searches=most, max_events=settings.learn_max_events)
    now = [0.0]
    rewrite = Timed()
    kwargs: dict[str, Any] = {"clock": lambda: now[0]}
    if "rewrite" in inspect.signature(DirStore).parameters:
        kwargs["rewrite"] = rewrite
    pace = ttl / (2 * most)  # twice the bound within a TTL: the bound keeps the most
    made = searches(count, pace)
    with tempfile.TemporaryDirectory() as folder:
        store = DirStore(Path(folder), bounds, **kwargs)
        took: list[float] = []
        for i, search in enumerate(made):
            now[0] = i * pace
            began = time.perf_counter()
            store.remember(search)
            took.append(time.perf_counter() - began)
        for thread in rewrite.threads:
            thread.join()
        del made, search  # the store's searches alone are held now
        began = time.perf_counter()
        gc.collect()
        collect = time.perf_counter() - began
        held = store._memory.kept()
    ms = np.asarray(took) * 1000
    worst = int(np.argmax(ms))
    apart = ", ".join(f"{s:.2f} s" for s in rewrite.seconds) or "none (in the search)"
    return [
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {count:,} searches, "
        f"TTL {ttl} s, at most {most:,} kept ({held:,} at the end)",
        "| remember p50 ms | p99 | p99.9 | slowest (search #) | rewrites apart | full gc ms |",
        "|---:|---:|---:|---|---|---:|",
        f"| {np.percentile(ms, 50):.3f} | {np.percentile(ms, 99):.3f} | "
        f"{np.percentile(ms, 99.9):.2f} | {ms[worst]:.1f} ({worst:,}) | {apart} | "
        f"{1000 * collect:.1f} |",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=220_000)
    args = parser.parse_args(argv)
    print("\n".join(run(args.searches)))
    given = " ".join(sys.argv[1:] if argv is None else argv)
    print(f"\n$ PYTHONPATH=service:. python -m loadtests.remember {given}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
