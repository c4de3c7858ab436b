"""How the learned arm's constants were chosen: ``python -m
tool_selector.offline.evaluation.learn_grid`` (offline only; the server never imports it).

Each candidate (the learned term's weight in the fusion, ``FusionParams.learn_weight``; the
least near events that called a tool, ``LearnRule.support``; and the prior that damps a tool
one near event alone called, ``LearnRule.lone``) replays every set's dev traffic and
measures the dev half it did not learn from (``learn.LearnEval``, ``--split dev``), with 10%
and with 30% of the simulated model's calls wrong, and at further shares (``QUALIFY``, 50%;
``--qualify`` names others in its place) which must lower nothing but do not count in the
mean. A candidate qualifies on a group of sets when no set's R@1 or R@5 is lower at any
share; the choice is the qualifying candidate with the best mean R@1 gain at 10% and 30%.
Printed: every candidate's gains per set, the choice on all seven sets (the service's
``fitted.LEARN`` and ``LEARN_WEIGHT``), and, per set, the choice made on the other six
sets' dev alone (leave-one-set-out: a constant that wins only with the set in the choice is
not what a new deployment gets).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace

from threadpoolctl import threadpool_limits

from tool_selector.embeddings.encoder import Encoder
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.offline.evaluation.dataset import (
    DATASETS,
    Dataset,
    default_bench_dir,
    load_dataset,
)
from tool_selector.offline.evaluation.learn import LearnEval, Traffic, sampled
from tool_selector.ranking.fitted import SHIPPED, Rules
from tool_selector.ranking.glossary import Glossary, default_glossary
from tool_selector.settings import Settings

WEIGHTS = (12.0,)
#: (support, lone): two near calls wanted, or one whose lone prior damps it (0.1: as two).
VOTES = ((2.0, 0.1), (1.0, 0.1), (1.0, 1.0), (1.0, 2.0), (1.0, 4.0))
WRONG = (0.1, 0.3)
#: Further shares at which a candidate must lower no set (``--qualify``'s default).
QUALIFY = (0.5,)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One setting of the chosen constants."""

    weight: float
    support: float
    lone: float = 0.1

    @property
    def name(self) -> str:
        return f"weight {self.weight:g}, support {self.support:g}, lone {self.lone:g}"

    def rules(self) -> Rules:
        """The service's rules with this candidate's constants."""
        return replace(
            SHIPPED,
            hybrid=replace(SHIPPED.hybrid, learn_weight=self.weight),
            static=replace(SHIPPED.static, learn_weight=self.weight),
            cross=replace(SHIPPED.cross, learn_weight=self.weight),
            learn=replace(SHIPPED.learn, support=self.support, lone=self.lone),
        )


def candidates() -> list[Candidate]:
    """Every candidate of the grid."""
    return [Candidate(w, support, lone) for w in WEIGHTS for support, lone in VOTES]


#: Per candidate, per traffic's wrong share, per set: (R@1 gain, R@5 gain) in points.
Gains = Mapping[Candidate, Mapping[float, Mapping[str, tuple[float, float]]]]


def measure(
    datasets: Sequence[Dataset],
    grid: Sequence[Candidate],
    jobs: int = 1,
    shares: Sequence[float] = WRONG,
) -> Gains:
    """Every candidate under every wrong share of ``shares`` on every set's dev halves,
    ``jobs`` candidates at a time (each in its own process, with its own encoder)."""
    gains: dict[Candidate, dict[float, dict[str, tuple[float, float]]]] = {}
    with ProcessPoolExecutor(jobs) if jobs > 1 else nullcontext() as pool:
        mapper = map if pool is None else pool.map
        each = itertools.repeat(datasets), itertools.repeat(tuple(shares))
        for c, by_wrong in mapper(_measured, grid, *each):
            gains[c] = by_wrong
            sys.stdout.write(row(c, by_wrong) + "\n")
            sys.stdout.flush()
    return gains


def _measured(
    c: Candidate, datasets: Sequence[Dataset], shares: Sequence[float]
) -> tuple[Candidate, dict[float, dict[str, tuple[float, float]]]]:
    """One candidate's gains: per wrong share, per set, (R@1 gain, R@5 gain)."""
    encoder, glossary = _models()
    run = LearnEval(encoder, c.rules(), glossary=glossary)
    by_wrong: dict[float, dict[str, tuple[float, float]]] = {}
    for wrong, data in itertools.product(shares, datasets):
        r = run.run(data, "dev", Traffic(wrong))
        (b1, b5), (a1, a5) = r.before.percent(), r.after.percent()
        by_wrong.setdefault(wrong, {})[data.name] = (round(a1 - b1, 1), round(a5 - b5, 1))
    return c, by_wrong


@functools.cache
def _models() -> tuple[Encoder, Glossary]:
    """The encoder and glossary every candidate of this process reads, loaded once (a worker
    of ``--jobs`` measures several candidates), BLAS on one core a process."""
    threadpool_limits(limits=1, user_api="blas")
    encoder = encoder_from_settings(Settings())
    if encoder is None:
        raise ValueError("the grid needs an encoder")
    return encoder, default_glossary()


def choose(gains: Gains, sets: Sequence[str]) -> Candidate | None:
    """The qualifying candidate (no set of ``sets`` lower at any share measured) of best
    mean R@1 at the shares of ``WRONG`` (a ``--qualify`` share only disqualifies)."""
    qualifying = [
        c
        for c, by_wrong in gains.items()
        if all(min(by_set[s]) >= 0 for by_set in by_wrong.values() for s in sets)
    ]
    if not qualifying:
        return None
    return max(qualifying, key=lambda c: _mean(gains[c], sets))


def _mean(
    by_wrong: Mapping[float, Mapping[str, tuple[float, float]]], sets: Sequence[str]
) -> float:
    return sum(by_wrong[w][s][0] for w in WRONG for s in sets) / max(len(WRONG) * len(sets), 1)


def row(c: Candidate, by_wrong: Mapping[float, Mapping[str, tuple[float, float]]]) -> str:
    """One candidate's line: per share, the mean R@1 gain and each set's R@1/R@5 gains."""
    parts = []
    for w, by_set in by_wrong.items():
        mean = sum(g[0] for g in by_set.values()) / max(len(by_set), 1)
        sets = " ".join(f"{s} {g[0]:+.1f}/{g[1]:+.1f}" for s, g in by_set.items())
        parts.append(f"{w:.0%} wrong: mean R@1 {mean:+.2f} | {sets}")
    return f"{c.name}: " + " || ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    shares = tuple(dict.fromkeys([*WRONG, *args.qualify]))
    bench = default_bench_dir()
    sets = sampled([load_dataset(bench, name) for name in args.dataset or DATASETS], args.limit)
    sys.stdout.write(f"`{command(args)}`\n")
    gains = measure(sets, candidates(), args.jobs, shares)
    names = [d.name for d in sets]
    chosen = choose(gains, names)
    sys.stdout.write(f"chosen on every set's dev: {chosen.name if chosen else 'none qualifies'}\n")
    for held in names if len(names) > 1 else []:
        sys.stdout.write(_fold(gains, names, held) + "\n")
    return 0


def command(args: argparse.Namespace) -> str:
    """The command line that measures what ``args`` asks for (printed with the results)."""
    options = f" --jobs {args.jobs}" if args.jobs > 1 else ""
    options += " --qualify" + "".join(f" {w}" for w in args.qualify)  # repr: parses back
    options += "".join(f" --dataset {name}" for name in args.dataset or [])
    return f"python -m tool_selector.offline.evaluation.learn_grid --limit {args.limit}{options}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tool_selector.offline.evaluation.learn_grid")
    p.add_argument("--limit", type=int, default=6000, help="most queries per set (default 6000)")
    p.add_argument("--dataset", action="append", choices=DATASETS, help="a set (default: all)")
    p.add_argument("--jobs", type=int, default=1, help="candidates measured at once (default 1)")
    p.add_argument(
        "--qualify",
        type=float,
        nargs="*",
        default=list(QUALIFY),
        help="further wrong shares at which a candidate must lower no set, not in the mean"
        " (default 0.5; none given: none)",
    )
    return p


def _fold(gains: Gains, names: Sequence[str], held: str) -> str:
    """The leave-one-set-out line: the choice the other sets make, judged on ``held``."""
    pick = choose(gains, [n for n in names if n != held])
    got = (
        " ".join(
            f"{w:.0%} wrong {g[held][0]:+.1f}/{g[held][1]:+.1f}" for w, g in gains[pick].items()
        )
        if pick
        else ""
    )
    return (
        f"held out {held}: chosen on the others': {pick.name if pick else 'none'}; "
        f"its R@1/R@5 gains on {held}: {got}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
