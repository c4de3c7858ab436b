"""What multi-step ranking costs at 4,000 tools, in process: ``python -m loadtests.stepcost``.

Seal-Tools' catalog (4,076 tools) and its multi-step test patterns of ``--chars`` characters
or so (two or more clauses, ``ranking.steps``), each ranked by ``Selector.select`` with the
real model (one thread) under four rules: ``off``, ``steps`` (each clause its own vector:
one batched encode per new pattern), ``steps, whole cos`` (no encode) and ``shipped`` (the
shipped rule: long tasks, each clause read in the pattern's context from its own forward
pass, no further encode). A **new** pattern
has no vector cached (the whole pattern's and its clauses' are encoded in the request); a
**repeated** one has them all cached. The modes take turns pattern by pattern, so they share
the minute's load. The tool matrix is the static table's rows stored under the model's id:
the cost of scoring is the matrix's shape, not its values, and embedding 4,000 tools first
would take minutes of CPU (with a second encoder, the rows once per model, joined). Prints
p50 / p99 ms per mode; say the load next to them.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence

from tests.support import static_table

from tool_selector.embeddings.encoder import Ensemble
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.embeddings.static import StaticEncoder, static_matrix
from tool_selector.lru import BoundedLRU
from tool_selector.offline.evaluation.dataset import default_bench_dir, load_dataset
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.ranking.steps import StepRule, clauses
from tool_selector.settings import Settings

MODES: dict[str, StepRule | None] = {
    "off": None,
    "steps": StepRule(),
    "steps, whole cos": StepRule(own_vectors=False),
    "shipped": SHIPPED_STEPS,
}


def _p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m loadtests.stepcost", description=__doc__.split("\n")[0]
    )
    p.add_argument("--patterns", type=int, default=80, help="new patterns per mode (80)")
    p.add_argument("--chars", type=int, default=360, help="pattern length, +-60 (360)")
    args = p.parse_args(argv)
    data = load_dataset(default_bench_dir(), "sealtools")
    texts = [
        q.text
        for q in data.queries
        if abs(len(q.text) - args.chars) <= 60 and len(clauses(q.text)) >= 2
    ][: args.patterns]
    encoder = encoder_from_settings(Settings.from_env({}))
    assert encoder is not None
    catalogs, tools = CatalogStore(50_000), ToolSource.of(list(data.tools))
    selectors = {
        mode: Selector(
            encoder=encoder,
            catalogs=catalogs,
            queries=BoundedLRU(10_000),
            embed_deadline=math.inf,
            rules=Rules(steps=rule),
        )
        for mode, rule in MODES.items()
    }
    entry = selectors["off"].entry(tools).entry
    static = StaticEncoder(static_table())
    rows = static_matrix(static, entry.catalog.texts)
    if isinstance(encoder, Ensemble):
        rows = encoder.combine([rows] * len(encoder.parts))
    entry.set_matrix(encoder.model_id, rows)
    encoder.encode(["warm the model up"])
    new: dict[str, list[float]] = {m: [] for m in MODES}
    again: dict[str, list[float]] = {m: [] for m in MODES}
    for text in texts:
        for mode, selector in selectors.items():
            for times in (new[mode], again[mode]):
                t0 = time.perf_counter()
                selector.select(Ask(pattern=text, tools=tools, top_k=5))
                times.append(1000 * (time.perf_counter() - t0))
    clause_counts = [len(clauses(t)) for t in texts]
    print(
        f"{len(texts)} Seal-Tools patterns of {statistics.mean(len(t) for t in texts):.0f} chars "
        f"(mean), {statistics.mean(clause_counts):.1f} clauses (mean), 4,076 tools, in process"
    )
    print("| mode | new pattern p50 / p99 ms | repeated pattern p50 / p99 ms |\n|---|---|---|")
    for mode in MODES:
        print(
            f"| {mode} | {statistics.median(new[mode]):.1f} / {_p99(new[mode]):.1f} | "
            f"{statistics.median(again[mode]):.1f} / {_p99(again[mode]):.1f} |"
        )
    print(f"\n`python -m loadtests.stepcost {' '.join(sys.argv[1:] if argv is None else argv)}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
