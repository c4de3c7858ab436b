"""A new catalog's first request, in process, stage by stage: ``python -m loadtests.first_request``.

Builds the service's state from the default settings (``http.app.build_state``, the encoders
and tables ``make install`` placed; ``load_encoder`` caps BLAS and measures the models' rates
as the service's start does), and turns the background embedding off (each new catalog
would queue its own job, and the jobs would share the cores with the requests measured).
Then, at each ``--sizes`` catalog size, decodes and selects one request on each of ``--n``
never-seen catalogs of Seal-Tools tools (``workload.fresh_catalog``: a marker in every
description, so nothing of them is cached), one at a time, as the service's worker thread
does, after one request to warm the code. Prints p50 / p90 / max ms of the whole and of each
stage the search log names (``stages_ms``), and the paths that answered (``static`` while
no model has the catalog).

To compare with the code before a change, run the same command in a worktree of that
commit, alternating. No HTTP (``loadtests.budget`` has the first answer over HTTP, once per
size); no test asserts a time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import Counter, defaultdict

from prometheus_client import CollectorRegistry

from loadtests import workload
from loadtests.second_encoder import p
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.http.app import build_state
from tool_selector.http.startup import load_encoder
from tool_selector.settings import Settings
from tool_selector_client.wire import SEARCH_PATH

PATTERN = "send an email to my boss about the meeting"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 4000])
    parser.add_argument("--n", type=int, default=20, help="new catalogs at each size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    given = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"# command: PYTHONPATH=service:. python -m loadtests.first_request {given}".rstrip())
    state = build_state(Settings.from_env(os.environ), encoder_from_settings, CollectorRegistry())
    load_encoder(state)  # as the service starts: BLAS capped, the models' rates measured
    state.selector.jobs.close(0)  # no background embedding: each new catalog's job is dropped
    decoder, selector = state.decoder, state.selector
    rng = random.Random(args.seed)
    print("| tools | n | stage | p50 ms | p90 ms | max ms |")
    print("|---:|---:|---|---:|---:|---:|")
    for size in args.sizes:
        bodies = [workload.body(PATTERN, workload.fresh_catalog(rng, size)) for _ in range(args.n)]
        selector.select(
            decoder.decode(workload.body(PATTERN, workload.fresh_catalog(rng, size)), SEARCH_PATH)[
                1
            ]
        )
        timed: dict[str, list[float]] = defaultdict(list)
        paths: Counter[str] = Counter()
        for body in bodies:
            began = time.perf_counter()
            outcome = selector.select(decoder.decode(body, SEARCH_PATH)[1])
            timed["whole (decode and select)"].append(1000 * (time.perf_counter() - began))
            for stage, seconds in outcome.timings.items():
                timed[stage].append(1000 * seconds)
            paths[outcome.path] += 1
        for stage, ms in timed.items():
            print(
                f"| {size:,} | {len(ms)} | {stage} | {statistics.median(ms):.1f} "
                f"| {p(ms, 0.9):.1f} | {max(ms):.1f} |"
            )
        print(f"# @{size:,}: answered by {dict(paths)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
