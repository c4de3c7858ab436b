"""How many of the static arm's leaders should the models re-rank? (``pipeline.shortlist``)

``PYTHONPATH=service:. python -m loadtests.shortlist [--split dev] [--sizes 0,5,8,10,15,20]
[--limit 1000] [--datasets ...]``: in process, each set's real needs (``gold`` not empty) are
answered by the warm service (every encoder's vectors of the whole catalog) and, for each
shortlist size, by a new catalog's first answer (``runner.cold_selector``: the static arm,
with its first ``size`` tools re-ranked by the models as when the embedding deadline has
room for their vectors; 0: the static arm's answer, as past the deadline, read by the
models only where it says no match, as the service's rescue). It prints R@1 / R@5
per set and size, and each first answer's R@5 as a share of the warm one's. The shipped size,
``fitted.SHORTLIST``, was chosen on ``--split dev``; ``--split test`` judges it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Collection

from tool_selector.embeddings.factory import (
    encoder_from_settings,
    multilingual_from_settings,
    static_from_settings,
)
from tool_selector.offline.evaluation.dataset import DATASETS, default_bench_dir, pick_queries
from tool_selector.offline.evaluation.runner import EvalConfig, Evaluator, cold_selector
from tool_selector.pipeline.ask import Ask
from tool_selector.ranking.fitted import SHIPPED_STEPS
from tool_selector.ranking.glossary import default_glossary
from tool_selector.settings import Settings


def recalls(names: list[str], gold: Collection[str]) -> tuple[float, float]:
    """R@1 and R@5 of one answer (``names``, best first) against its ``gold``."""
    return float(bool(names) and names[0] in gold), len(set(gold) & set(names[:5])) / len(gold)


def run(split: str, sizes: list[int], limit: int | None, datasets: list[str]) -> list[str]:
    """One table row per set: the warm R@1 / R@5 and each size's."""
    settings = Settings.from_env(os.environ)
    encoder = encoder_from_settings(settings)
    static = static_from_settings(settings)
    if encoder is None or static is None:
        raise SystemExit("the shortlist needs the models and the static tables")
    config = EvalConfig(
        bench_dir=default_bench_dir(), datasets=datasets, split=split, limit=limit, progress=False
    )
    evaluator = Evaluator(
        encoder,
        config,
        None,
        static,
        multilingual_from_settings(settings),
        glossary=default_glossary() if settings.glossary else None,
        steps=SHIPPED_STEPS if settings.multi_step else None,
    )
    warm = evaluator.selector
    firsts = {size: cold_selector(warm, static, shortlist=size) for size in sizes}
    rows = []
    for name in datasets:
        data = evaluator.dataset(name)
        queries = [q for q in pick_queries(data.queries, split, limit) if q.gold]
        source = evaluator.prepare(data, queries)
        sums = {key: [0.0, 0.0] for key in ("warm", *sizes)}
        for q in queries:
            request, gold = Ask(pattern=q.text, tools=source, top_k=5), set(q.gold)
            for key, selector in (("warm", warm), *firsts.items()):
                one, five = recalls(selector.select(request).ranking.names, gold)
                sums[key][0] += one
                sums[key][1] += five
        n, warm5 = len(queries), sums["warm"][1]
        cells = [f"{100 * s[0] / n:.1f} / {100 * s[1] / n:.1f}" for s in sums.values()]
        shares = [f"{100 * sums[size][1] / max(warm5, 1e-9):.1f}%" for size in sizes]
        rows.append(f"| {name} ({n} q) | " + " | ".join(cells) + " | " + " | ".join(shares) + " |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--sizes", default="0,5,8,10,15,20", help="shortlist sizes, commas")
    parser.add_argument("--limit", type=int, default=1000, help="queries per set at most")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    began = time.time()
    rows = run(args.split, sizes, args.limit, args.datasets)
    head = ["set", "warm", *(f"first, {s}" if s else "first, static" for s in sizes)]
    head += [f"share, {s}" if s else "share, static" for s in sizes]
    print(f"R@1 / R@5, real needs, `{args.split}` split, at most {args.limit} queries a set:")
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    print("\n".join(rows))
    command = "python -m loadtests.shortlist " + shlex.join(sys.argv[1:] if argv is None else argv)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(began))
    print(f"\n`{command}`, {stamp}, {time.time() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
