"""What the learned arm costs, in process: ``python -m loadtests.learncost``.

A scope holding ``--events`` feedback records (20,000: the issue's bar), each a real request
of the bench sets (their queries, all of them, cycled), from two callers (one alone may fill
half a scope, ``Keep.per_caller``), read as the service reads a pattern
(MiniLM's query vector, hashed terms) with five tools of Arcade's catalog shown and one
called, and the learner's evidence built from them. Then ``--patterns`` Arcade requests are
ranked by ``Selector.select`` over Arcade's catalog, each twice in turn: in that scope (the
learned arm reads the evidence) and with no scope (no arm), their query vectors cached by a
first pass, so the difference is the arm's own cost. Prints p50 / p99 ms of both, the extra,
and the seconds the evidence took to build (what a replica pays when a scope's feedback
changes, at most every ``TOOL_SELECTOR_LEARN_REFRESH_MS``).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence

import numpy as np

from tool_selector.embeddings.encoder import Ensemble, encode_query
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.learning.learner import Learner
from tool_selector.learning.records import Called, Shown
from tool_selector.learning.store import Bounds, MemoryStore
from tool_selector.lru import BoundedLRU
from tool_selector.offline.evaluation.dataset import DATASETS, default_bench_dir, load_dataset
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import SHIPPED
from tool_selector.ranking.learned import pattern_terms, tool_identity
from tool_selector.settings import Settings

SCOPE = "load"


def _p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m loadtests.learncost", description=__doc__.split("\n")[0]
    )
    p.add_argument("--events", type=int, default=20_000, help="feedback records (20,000)")
    p.add_argument("--patterns", type=int, default=300, help="Arcade requests ranked (300)")
    args = p.parse_args(argv)
    encoder = encoder_from_settings(Settings.from_env({}))
    assert encoder is not None
    minilm = Ensemble.of(encoder).primary
    arcade = load_dataset(default_bench_dir(), "arcade")
    texts = list(
        dict.fromkeys(
            q.text for name in DATASETS for q in load_dataset(default_bench_dir(), name).queries
        )
    )
    rng = random.Random(7)
    rng.shuffle(texts)
    started = time.perf_counter()
    vectors = encode_query(minilm, texts[: min(len(texts), args.events)])
    encode_s = time.perf_counter() - started
    ids = [tool_identity(t.name, t.description or "") for t in arcade.tools]
    store = MemoryStore(Bounds(ttl=3600, max_searches=10, max_events=args.events))
    for i in range(args.events):
        j = i % len(vectors)
        shown = tuple(rng.sample(ids, 5))
        store.add(
            SCOPE,
            Called(
                Shown(
                    f"{i:032x}",
                    SCOPE,
                    f"proxy-{i % 2}",  # two callers: each fills half the scope (Keep.per_caller)
                    time.time(),
                    np.ascontiguousarray(vectors[j], np.float32).tobytes(),
                    pattern_terms(texts[j]),
                    shown,
                    shown,
                ),
                shown[:1],
            ),
        )
    learner = Learner(store, SHIPPED.learn, refresh=3600.0)
    t0 = time.perf_counter()
    evidence = learner.evidence(SCOPE)
    build_s = time.perf_counter() - t0
    assert evidence is not None
    selector = Selector(
        encoder,
        rules=SHIPPED,
        catalogs=CatalogStore(10_000),
        queries=BoundedLRU(10_000),
        embed_deadline=math.inf,
        learning=learner,
    )
    tools = ToolSource.of(list(arcade.tools))
    patterns = [q.text for q in arcade.queries][: args.patterns]
    for text in patterns:  # every vector cached: what remains is the ranking's own cost
        selector.select(Ask(pattern=text, tools=tools, top_k=5, scope=SCOPE))
    scoped: list[float] = []
    plain: list[float] = []
    fired = 0
    for text in patterns:
        for scope, times in ((SCOPE, scoped), (None, plain)):
            t1 = time.perf_counter()
            outcome = selector.select(Ask(pattern=text, tools=tools, top_k=5, scope=scope))
            times.append(1000 * (time.perf_counter() - t1))
            fired += int(scope is not None and "learned" in outcome.timings)
    print(
        f"{args.events:,} events in the scope ({len(evidence):,} kept; {len(vectors):,} distinct "
        f"requests, encoded in {encode_s:.0f} s), evidence built in {build_s:.2f} s; "
        f"{len(patterns)} Arcade requests over {len(arcade.tools)} tools, in process, "
        f"the learned arm read for {fired}"
    )
    print("| ranked | p50 ms | p99 ms |\n|---|---:|---:|")
    print(f"| no scope (no learned arm) | {statistics.median(plain):.2f} | {_p99(plain):.2f} |")
    print(f"| in the scope | {statistics.median(scoped):.2f} | {_p99(scoped):.2f} |")
    extra = statistics.median(s - q for s, q in zip(scoped, plain, strict=True))
    print(f"| extra (median of the pairs' differences) | {extra:.2f} | - |")
    print(f"\n`python -m loadtests.learncost {' '.join(sys.argv[1:] if argv is None else argv)}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
