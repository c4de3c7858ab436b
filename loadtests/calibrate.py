"""Sweep the static arm's relevance bar (``tool_floor``, ``no_match_floor``) on dev queries.

Positives: the dev queries of metatool, BFCL and Seal-Tools against 300-tool catalogs
holding their gold, and those of ``arcade`` and the agent set (``eval/agent``) against
their own catalogs. Negatives: each of the three datasets' queries against another's
catalog, arcade's ``gold: []`` dev queries and the agent set's ``no_match`` ones.

Both arms of the static path are swept: static tool vectors against the model's query
vector (``fitted.CROSS``) and against the static query vector (``fitted.STATIC``).
The ranking before the bar does not depend on the floors, so each query is ranked once
and the grid is read off its evidence. Rule: the highest no-match floor that keeps empty
answers to real needs at or under 1% on every set; the highest tool floor (at most the
no-match floor) that costs no R@5.

    python -m loadtests.calibrate
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tests.support import static_table

from loadtests.coldstart import as_tool
from loadtests.workload import BENCH_DIR
from tool_selector.embeddings.onnx import OnnxEncoder
from tool_selector.embeddings.static import StaticEncoder, static_matrix
from tool_selector.offline.evaluation.dataset import split_of
from tool_selector.ranking.catalog import Catalog, build_catalog, dedupe
from tool_selector.ranking.dense import FloatArray, cosine_scores, windows
from tool_selector.ranking.fitted import CROSS, STATIC
from tool_selector.ranking.fusion import FusionParams, evidence
from tool_selector.ranking.ranker import Query, Ranking, signals
from tool_selector.ranking.ranker import rank as rank_tools
from tool_selector.settings import Settings
from tool_selector_client.wire import Tool

TOP_K = 5
GRID = np.round(np.arange(0.0, 0.51, 0.01), 2)
PAIRS = (
    ("metatool", "sealtools"),
    ("sealtools", "metatool"),
    ("bfcl", "metatool"),
    ("metatool", "bfcl"),
    ("sealtools", "bfcl"),
    ("bfcl", "sealtools"),
)


@dataclass
class Case:
    """One query over one catalog: ``gold`` empty for a negative."""

    group: str
    catalog: str
    query: str
    gold: frozenset[str]


@dataclass
class Ranked:
    """What the bar reads of one ranked case: the best evidence among the top ``TOP_K``
    (``inf`` when the pattern names a tool) and R@5 at each tool floor of ``GRID``."""

    case: Case
    best: float
    recall: FloatArray


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _dev(path: Path, keep_empty: bool) -> list[dict[str, Any]]:
    limit = Settings().max_pattern_chars
    return [
        q
        for q in _rows(path / "queries.jsonl")
        if split_of(q["id"]) == "dev" and len(q["query"]) <= limit and (keep_empty or q.get("gold"))
    ]


def bench_set(
    name: str, n_tools: int = 300, n_queries: int = 150
) -> tuple[list[Tool], list[dict[str, Any]]]:
    """Dev queries (150 sampled) and a catalog of ``n_tools`` holding their gold."""
    tools = [as_tool(r)[0] for r in _rows(BENCH_DIR / name / "tools.jsonl")]
    rng = random.Random(3)
    queries = _dev(BENCH_DIR / name, keep_empty=False)
    queries = rng.sample(queries, min(n_queries, len(queries)))
    names = {t.name for t in tools}
    queries = [q for q in queries if set(q["gold"]) <= names]
    if len(tools) > n_tools:
        gold = {g for q in queries for g in q["gold"]}
        keep = [t for t in tools if t.name in gold][:n_tools]
        rest = [t for t in tools if t.name not in gold]
        tools = keep + rng.sample(rest, max(0, n_tools - len(keep)))
        kept = {t.name for t in tools}
        queries = [q for q in queries if set(q["gold"]) <= kept]
    return tools, queries


def own_set(path: Path) -> tuple[list[Tool], list[dict[str, Any]]]:
    """The whole catalog and every dev query, ``gold: []`` ones included."""
    return [as_tool(r)[0] for r in _rows(path / "tools.jsonl")], _dev(path, keep_empty=True)


def cases() -> tuple[dict[str, list[Tool]], list[Case]]:
    """Every catalog by name, and every case (positives, then negatives by kind)."""
    catalogs: dict[str, list[Tool]] = {}
    out: list[Case] = []
    sets = {}
    for name in ("metatool", "bfcl", "sealtools"):
        catalogs[name], sets[name] = bench_set(name)
        out += [Case(name, name, q["query"], frozenset(q["gold"])) for q in sets[name]]
    for query_set, catalog in PAIRS:
        group = f"cross:{query_set}>{catalog}"
        out += [Case(group, catalog, q["query"], frozenset()) for q in sets[query_set][:60]]
    for name, path in (("arcade", BENCH_DIR / "arcade"), ("agent", Path("eval/agent"))):
        catalogs[name], queries = own_set(path)
        out += [Case(name, name, q["query"], frozenset(q["gold"])) for q in queries]
    return catalogs, out


def query_vector(encoder: StaticEncoder | OnnxEncoder, pattern: str) -> FloatArray:
    """As ``QueryVectors.one``: one vector, or one per window of a long pattern."""
    parts = windows(pattern)
    encoded = encoder.encode(parts)
    return np.ascontiguousarray(encoded[0] if len(parts) == 1 else encoded, dtype=np.float32)


def rank(
    catalog: Catalog, query: Query, cos: FloatArray, gold: frozenset[str], params: FusionParams
) -> tuple[float, FloatArray]:
    """The best evidence among the top ``TOP_K`` and R@5 at each tool floor of ``GRID``.

    One ``ranker.rank`` without a bar and as deep as the catalog gives the fused order; the bar
    (``ranker.rank``: a named tool always clears it) is then read off the evidence.
    """
    bm25 = catalog.index.scores(query.terms)
    bare = replace(params, tool_floor=-np.inf, no_match_floor=-np.inf)
    whole = rank_tools(
        catalog, query, bm25=bm25, dense=cos, top_k=len(catalog), always_keep=(), params=bare
    )
    order = np.array([catalog.positions[name] for name in whole.names], dtype=np.intp)
    strength = evidence(signals(catalog, query, bm25, cos, params.explained_top), params)
    exact = set(catalog.exact_matches(query.pattern))
    named = exact or set(catalog.near_matches(query.pattern) if params.near_name_bonus else ())
    strength[list(named)] = np.inf
    ordered = strength[order]
    best = float(ordered[:TOP_K].max())
    hits = np.array([name in gold for name in whole.names], dtype=bool)
    recall = np.zeros(len(GRID), dtype=np.float32)
    if gold:
        for j, floor in enumerate(GRID):
            recall[j] = hits[ordered >= floor][:TOP_K].sum() / len(gold)
    return best, recall


def sweep(arm: str) -> list[Ranked]:
    """Rank every case once on ``arm`` ("cross": the model's query vector, else static)."""
    static = StaticEncoder(static_table())
    encoder = OnnxEncoder() if arm == "cross" else static
    params = CROSS if arm == "cross" else STATIC
    tools, todo = cases()
    built: dict[str, tuple[Catalog, FloatArray]] = {}
    for name, ts in tools.items():
        catalog = build_catalog(dedupe(ts)[0])
        built[name] = catalog, static_matrix(static, catalog.texts)
    vectors: dict[str, FloatArray] = {}
    out = []
    for case in todo:
        catalog, matrix = built[case.catalog]
        if case.query not in vectors:
            vectors[case.query] = query_vector(encoder, case.query)
        cos = cosine_scores(vectors[case.query], matrix)
        query = Query.parse(case.query)
        ranked = Ranked(case, *rank(catalog, query, cos, case.gold, params))
        check(
            ranked,
            rank_tools(
                catalog,
                query,
                bm25=catalog.index.scores(query.terms),
                dense=cos,
                top_k=TOP_K,
                always_keep=(),
                params=params,
            ),
            params,
        )
        out.append(ranked)
    return out


def check(ranked: Ranked, answer: Ranking, params: FusionParams) -> None:
    """The grid must give ``select``'s own answer at the arm's current floors."""
    case, empty = ranked.case, ranked.best < params.no_match_floor
    if (not answer.names) != empty:
        raise RuntimeError(f"no-match disagrees with select on {case.query!r}")
    j = int(np.argmin(abs(GRID - params.tool_floor)))
    if case.gold and not empty and abs(GRID[j] - params.tool_floor) < 1e-9:
        got = len(set(answer.names) & case.gold) / len(case.gold)
        if abs(got - ranked.recall[j]) > 1e-6:
            raise RuntimeError(f"R@5 disagrees with select on {case.query!r}")


def table(
    ranked: Sequence[Ranked], no_match: float, tool: float
) -> dict[str, tuple[float, float, float]]:
    """Per set: R@5 and empty share of positives, abstained share of negatives (in %)."""
    j = int(np.argmin(abs(GRID - tool)))
    groups: dict[str, list[Ranked]] = {}
    for r in ranked:
        key = "cross" if r.case.group.startswith("cross:") else r.case.group
        groups.setdefault(key, []).append(r)
    out = {}
    for key, rs in groups.items():
        pos = [r for r in rs if r.case.gold]
        neg = [r for r in rs if not r.case.gold]
        recall = [r.recall[j] if r.best >= no_match else 0.0 for r in pos]
        out[key] = (
            100 * float(np.mean(recall)) if pos else float("nan"),
            100 * float(np.mean([r.best < no_match for r in pos])) if pos else float("nan"),
            100 * float(np.mean([r.best < no_match for r in neg])) if neg else float("nan"),
        )
    return out


def choose(ranked: Sequence[Ranked]) -> tuple[float, float]:
    """The rule of the module docstring, over ``GRID``."""
    no_match = max(
        float(f) for f in GRID if all(e <= 1.0 for _, e, _ in positives(table(ranked, f, 0.0)))
    )
    base = table(ranked, no_match, 0.0)
    tool = max(
        float(f)
        for f in GRID
        if f <= no_match
        and all(
            t[0] >= base[k][0] - 1e-9 for k, t in table(ranked, no_match, f).items() if t[0] == t[0]
        )
    )
    return no_match, tool


def positives(row: dict[str, tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    return [v for k, v in row.items() if k != "cross"]


def line(ranked: Sequence[Ranked], no_match: float, tool: float, note: str = "") -> str:
    row = table(ranked, no_match, tool)
    cells = [f"{tool:.2f}", f"{no_match:.2f}"]
    for key in ("metatool", "bfcl", "sealtools", "arcade", "agent"):
        cells.append(f"{row[key][0]:.1f} ({row[key][1]:.1f}%)")
    cells += [f"{row['cross'][2]:.1f}%", f"{row['arcade'][2]:.1f}%", f"{row['agent'][2]:.1f}%"]
    return "| " + " | ".join(cells) + f" | {note}"


def _around(low: float, high: float) -> list[float]:
    return [float(f) for f in GRID if low - 1e-9 <= f <= high + 1e-9]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Sweep the static arm's floors.")
    parser.add_argument(
        "--arms", nargs="+", default=["cross", "static"], choices=["cross", "static"]
    )
    args = parser.parse_args(argv)
    head = (
        "| tool floor | no-match floor | metatool | BFCL | Seal-Tools | arcade | agent"
        " | abstained: cross | arcade none | agent no_match |"
    )
    for arm in args.arms:
        ranked = sweep(arm)
        shipped = CROSS if arm == "cross" else STATIC
        no_match, tool = choose(ranked)
        counts: dict[tuple[str, str], int] = {}
        for r in ranked:
            key = (r.case.group.split(":")[0], "positives" if r.case.gold else "negatives")
            counts[key] = counts.get(key, 0) + 1
        print(
            f"== {arm}: R@5 (empty positives); "
            + ", ".join(f"{g} {k} {n}" for (g, k), n in counts.items())
        )
        print(head)
        print(line(ranked, shipped.no_match_floor, shipped.tool_floor, "shipped"))
        for nm in _around(no_match - 0.05, no_match + 0.04):
            print(line(ranked, float(nm), min(tool, float(nm)), "chosen" if nm == no_match else ""))
        for tf in _around(tool - 0.04, min(no_match, tool + 0.04)):
            print(line(ranked, no_match, float(tf), "chosen" if tf == tool else ""))
        print(f"chosen: tool_floor {tool:.2f}, no_match_floor {no_match:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
