"""Does the int8 ONNX encoder rank like the full model? ``python -m loadtests.encoders``.

For sampled benchmark queries, ranks the folder's whole tool pool with the real hybrid
selector twice (sentence-transformers, then ONNX int8) and reports: cosine between the two
models' vectors (tools and queries), top-1 and top-5 agreement of the final answers, Recall@5
against the gold labels for each, and encode speed (batch throughput, single-query latency).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence

import numpy as np

from loadtests.workload import BENCH_DIR
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Encoder, SentenceTransformerEncoder
from tool_selector.embeddings.onnx import OnnxEncoder
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import build_catalog
from tool_selector_client.wire import SearchRequest, Tool


def load(folder: str, n: int, seed: int) -> tuple[list[Tool], list[dict[str, object]]]:
    tools = []
    for line in (BENCH_DIR / folder / "tools.jsonl").read_text().splitlines():
        t = json.loads(line)
        fn = {"name": t["name"], "description": t.get("description") or ""}
        if t.get("parameters"):
            fn["parameters"] = t["parameters"]
        tools.append(
            Tool(
                name=t["name"],
                description=fn["description"],
                definition={"type": "function", "function": fn},
            )
        )
    queries = [
        json.loads(x) for x in (BENCH_DIR / folder / "queries.jsonl").read_text().splitlines()
    ]
    return tools, random.Random(seed).sample(queries, min(n, len(queries)))


def answers(
    encoder: Encoder, tools: list[Tool], queries: Sequence[dict[str, object]]
) -> list[list[str]]:
    sel = Selector(
        encoder=encoder,
        cache=MemoryCache(1 << 30),
        catalogs=CatalogStore(100_000),
        queries=BoundedLRU(0),
        embed_deadline=1e9,
    )
    return [
        sel.select(SearchRequest(pattern=str(q["query"]), tools=tools)).ranking.names
        for q in queries
    ]


def recall5(names: list[list[str]], queries: Sequence[dict[str, object]]) -> float:
    scores = [
        len(set(n[:5]) & set(q["gold"])) / len(q["gold"])
        for n, q in zip(names, queries, strict=True)
    ]  # type: ignore[arg-type]
    return 100 * sum(scores) / len(scores)


def speed(encoder: Encoder, texts: list[str], queries: list[str]) -> tuple[float, float]:
    encoder.encode(texts[:8])
    start = time.perf_counter()
    encoder.encode(texts)
    batch = len(texts) / (time.perf_counter() - start)
    lat = []
    for q in queries:
        s = time.perf_counter()
        encoder.encode([q])
        lat.append(time.perf_counter() - s)
    return batch, float(np.percentile(lat, 50) * 1000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--folders", nargs="+", default=["metatool", "bfcl"])
    args = parser.parse_args()
    full, quant = SentenceTransformerEncoder(), OnnxEncoder()
    print(
        "| folder | tools | queries | cos tools min/mean | cos queries min/mean | top-1 agree "
        "| top-5 Jaccard | R@5 full | R@5 int8 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for folder in args.folders:
        tools, queries = load(folder, args.queries, seed=7)
        texts = [t.dense_text() for t in build_catalog(tools).texts]
        qtexts = [str(q["query"]) for q in queries]
        ct = np.sum(full.encode(texts) * quant.encode(texts), axis=1)
        cq = np.sum(full.encode(qtexts) * quant.encode(qtexts), axis=1)
        a, b = answers(full, tools, queries), answers(quant, tools, queries)
        top1 = 100 * np.mean([x[:1] == y[:1] for x, y in zip(a, b, strict=True)])
        overlap = 100 * np.mean(
            [
                len(set(x[:5]) & set(y[:5])) / max(1, len(set(x[:5]) | set(y[:5])))
                if x or y
                else 1.0
                for x, y in zip(a, b, strict=True)
            ]
        )
        cells = [
            folder,
            str(len(tools)),
            str(len(queries)),
            f"{ct.min():.4f} / {ct.mean():.4f}",
            f"{cq.min():.4f} / {cq.mean():.4f}",
            f"{top1:.1f}%",
            f"{overlap:.1f}%",
            f"{recall5(a, queries):.1f}",
            f"{recall5(b, queries):.1f}",
        ]
        print("| " + " | ".join(cells) + " |")
    tools, queries = load("sealtools", 100, seed=7)
    texts = [t.dense_text() for t in build_catalog(tools[:320]).texts]
    qtexts = [str(q["query"]) for q in queries]
    for name, enc in (("sentence-transformers", full), ("onnx-int8", quant)):
        batch, single = speed(enc, texts, qtexts)
        print(
            f"speed {name}: {batch:.0f} tool texts/s (batches of 32), "
            f"single query p50 {single:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
