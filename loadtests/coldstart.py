"""Cold to warm: how good and how fast are the first answers for a catalog nobody has seen?

``python -m loadtests.coldstart`` has two parts:

- **quality** (in process, no server): R@5 and the empty rate over a dataset's positive
  queries for the ranking paths a new catalog goes through: BM25 alone (``lexical``, what
  it got before static embeddings), BM25 + static embeddings (``static``, the first answer:
  static tool vectors against the model's query vector; ``static, model loading``: against
  the static query vector, before the model has loaded) and BM25 + the full model
  (``hybrid``, the warm answer), and the static answer's R@5 as a share of the warm one's.
- **timeline** (a real service on loopback, fresh process, no Redis, no warm-up): the
  dataset's whole catalog is sent with its queries at ``--rate`` requests per second from
  the first request on, until the catalog has been answered ``hybrid`` ``--after`` times.
  Each answer is scored, and the run is reported per ranking path (``shortlist``: a static
  answer whose first tools the models re-ranked, ``pipeline.shortlist``): when it started, answers,
  R@5, empty rate, p50 and p99 latency, and the seconds until the first hybrid answer.
  With ``--warm FOLDER`` the service first embeds that catalog and sees each of its
  patterns once; then, while the new catalog is embedded in the background, warm requests
  for it arrive at ``--warm-rate`` per second (open loop, latency from the scheduled send
  time) and their p50/p99 are reported for the seconds before and after the new catalog's
  first hybrid answer: what background embedding costs the warm answers.

Datasets: a folder of the bench (``arcade``, ``sealtools``, ...) or any folder with
``tools.jsonl`` (bench rows or raw provider tool objects) and ``queries.jsonl``
(``{"query", "gold": [...]}``; queries with empty gold, or longer than the service accepts,
are skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from tests.support import start_service

from loadtests.workload import BENCH_DIR
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

SEARCH = "/v1/tool-discovery/search"


@dataclass
class Dataset:
    name: str
    tools: list[Tool]
    raw: list[dict[str, Any]]
    queries: list[dict[str, Any]]


def as_tool(row: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
    """A tool row as the wire ``Tool`` and the JSON the proxy would send for it."""
    fn = row.get("function") if isinstance(row.get("function"), dict) else row
    name, description = str(fn["name"]), fn.get("description") or None
    if "parameters" in row and "type" not in row:  # a bench row, not a provider object
        row = {"type": "function", "function": {k: row[k] for k in ("name", "description")}}
        row["function"]["parameters"] = fn["parameters"]
    wire = {
        "name": name,
        "definition": row,
        **({"description": description} if description else {}),
    }
    return Tool(name=name, description=description, definition=row), wire


def load(folder: str, tools_limit: int, queries_limit: int, seed: int = 7) -> Dataset:
    path = Path(folder) if "/" in folder else BENCH_DIR / folder
    rows = [json.loads(x) for x in (path / "tools.jsonl").read_text().splitlines() if x.strip()]
    pairs = [as_tool(r) for r in rows]
    queries = [
        q
        for q in (json.loads(x) for x in (path / "queries.jsonl").read_text().splitlines() if x)
        if q.get("gold") and len(q["query"]) <= Settings().max_pattern_chars
    ]
    rng = random.Random(seed)
    rng.shuffle(queries)
    if len(pairs) > tools_limit:  # keep every sampled query's gold, fill with the rest
        queries = queries[:queries_limit]
        gold = {g for q in queries for g in q["gold"]}
        keep = [p for p in pairs if p[0].name in gold]
        rest = [p for p in pairs if p[0].name not in gold]
        pairs = keep + rng.sample(rest, max(0, tools_limit - len(keep)))
        names = {p[0].name for p in pairs}
        queries = [q for q in queries if set(q["gold"]) <= names]
    return Dataset(path.name, [p[0] for p in pairs], [p[1] for p in pairs], queries[:queries_limit])


def score(names: Sequence[str], gold: Sequence[str]) -> float:
    return len(set(names[:5]) & set(gold)) / len(gold)


def quality(data: Dataset) -> dict[str, tuple[float, float]]:
    """R@5 and empty share (in %) of each ranking path over the dataset's queries."""
    from tests.support import static_table  # noqa: PLC0415

    from tool_selector.embeddings.cache import MemoryCache  # noqa: PLC0415
    from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415
    from tool_selector.embeddings.static import StaticEncoder  # noqa: PLC0415
    from tool_selector.lru import BoundedLRU  # noqa: PLC0415
    from tool_selector.pipeline.catalog_store import CatalogStore  # noqa: PLC0415
    from tool_selector.pipeline.jobs import EmbeddingJobs  # noqa: PLC0415
    from tool_selector.pipeline.selector import Selector  # noqa: PLC0415

    static, model = StaticEncoder(static_table()), OnnxEncoder()
    never = EmbeddingJobs()
    never.close()  # every background job is dropped: the catalog stays unembedded
    arms = {
        "lexical": Selector(),
        "static, model loading": Selector(static=static),
        "static": Selector(encoder=model, static=static, jobs=never, embed_deadline=0.0),
        "hybrid": Selector(
            encoder=model,
            cache=MemoryCache(1 << 30),
            catalogs=CatalogStore(100_000),
            queries=BoundedLRU(0),
            embed_deadline=1e9,
        ),
    }
    out = {}
    for arm, sel in arms.items():
        answers = [
            sel.select(SearchRequest(pattern=q["query"], tools=data.tools)).ranking.names
            for q in data.queries
        ]
        recall = 100 * np.mean(
            [score(a, q["gold"]) for a, q in zip(answers, data.queries, strict=True)]
        )
        empty = 100 * np.mean([not a for a in answers])
        out[arm] = (float(recall), float(empty))
    return out


@dataclass
class Answer:
    at: float
    ms: float
    path: str
    recall: float
    empty: bool


@dataclass
class Timeline:
    answers: list[Answer] = field(default_factory=list)
    warm: list[Answer] = field(default_factory=list)  # ``at``: monotonic send time
    began: float = 0.0

    def first_hybrid(self) -> float | None:
        return next((a.at for a in self.answers if a.path == "hybrid"), None)


def timeline(
    data: Dataset,
    rate: float,
    after: int,
    limit: float,
    env: dict[str, str],
    *,
    warm: Dataset | None = None,
    warm_rate: float = 75.0,
) -> Timeline:
    """Send the catalog with its queries at ``rate``/s to a fresh service; score each answer.

    With ``warm``: that catalog is embedded first, then sent at ``warm_rate``/s meanwhile."""
    tmp = Path(tempfile.mkdtemp(prefix="tool-selector-cold-"))
    proc = start_service(tmp, {"TOOL_SELECTOR_LOG_LEVEL": "WARNING", **env}, deadline=None)
    result, hybrid = Timeline(), 0
    done = threading.Event()
    loader = None
    try:
        with httpx.Client(timeout=30) as client:
            if warm is not None:
                bodies = _prime(client, proc.url, warm)
                loader = threading.Thread(
                    target=_warm_load, args=(proc.url, bodies, warm_rate, done, result.warm)
                )
                loader.start()
            began = time.monotonic()
            result.began = began
            for i in range(10**9):
                q = data.queries[i % len(data.queries)]
                body = {"pattern": q["query"], "top_k": 5, "tools": data.raw}
                payload = json.dumps(body).encode()
                wait = began + i / rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                sent = time.monotonic()
                r = client.post(
                    proc.url + SEARCH, content=payload, headers={"content-type": "application/json"}
                )
                r.raise_for_status()
                names = r.json()["selected_names"]
                path = _path(r.headers)
                ms = 1000 * (time.monotonic() - sent)
                result.answers.append(
                    Answer(sent - began, ms, path, score(names, q["gold"]), not names)
                )
                hybrid += path == "hybrid"
                if hybrid >= after or sent - began > limit:
                    break
    finally:
        done.set()
        if loader is not None:
            loader.join()
        proc.stop()
    return result


def _prime(client: httpx.Client, url: str, warm: Dataset) -> list[bytes]:
    """Embed ``warm``'s catalog (until it is answered hybrid) and send each pattern once."""
    bodies = [
        json.dumps({"pattern": q["query"], "top_k": 5, "tools": warm.raw}).encode()
        for q in warm.queries
    ]
    headers = {"content-type": "application/json"}
    deadline = time.monotonic() + 600
    while (
        client.post(url + SEARCH, content=bodies[0], headers=headers).headers.get(
            "x-tool-selector-ranking"
        )
        != "hybrid"
    ):
        if time.monotonic() > deadline:
            raise RuntimeError("the warm catalog was not embedded within 600 s")
        time.sleep(0.5)
    for body in bodies:
        client.post(url + SEARCH, content=body, headers=headers).raise_for_status()
    return bodies


def _warm_load(
    url: str, bodies: list[bytes], rate: float, done: threading.Event, out: list[Answer]
) -> None:
    """Open loop on one connection: latency counts from each request's scheduled time."""
    headers = {"content-type": "application/json"}
    with httpx.Client(timeout=30) as client:
        began = time.monotonic()
        for i in range(10**9):
            if done.is_set():
                return
            due = began + i / rate
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            r = client.post(url + SEARCH, content=bodies[i % len(bodies)], headers=headers)
            path = r.headers.get("x-tool-selector-ranking", "?")
            out.append(Answer(due, 1000 * (time.monotonic() - due), path, 0.0, False))


def _path(headers: httpx.Headers) -> str:
    """The answer's ranking path, ``shortlist`` for a static answer the models re-ranked
    (``X-Tool-Selector-Embedded: partial`` on the static path: the shortlist arm)."""
    path = headers.get("x-tool-selector-ranking", "?")
    partial = headers.get("x-tool-selector-embedded") == "partial"
    return "shortlist" if path == "static" and partial else path


def report(data: Dataset, line: Timeline) -> str:
    rows = [
        f"{data.name}: {len(data.tools)} tools, {len(line.answers)} answers; first hybrid "
        f"answer at {line.first_hybrid() or float('nan'):.1f} s",
        "| path | from (s) | answers | R@5 | empty | p50 ms | p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    first = line.answers[0]
    rows.append(
        f"| first answer ({first.path}) | 0.0 | 1 | {100 * first.recall:.0f} | "
        f"{'yes' if first.empty else 'no'} | {first.ms:.1f} | {first.ms:.1f} |"
    )
    for path in ("lexical", "static", "shortlist", "hybrid"):
        some = [a for a in line.answers if a.path == path]
        if not some:
            continue
        ms = np.array([a.ms for a in some])
        rows.append(
            f"| {path} | {some[0].at:.1f} | {len(some)} | "
            f"{100 * np.mean([a.recall for a in some]):.1f} | "
            f"{100 * np.mean([a.empty for a in some]):.1f}% | {np.percentile(ms, 50):.1f} | "
            f"{np.percentile(ms, 99):.1f} |"
        )
    if line.warm:
        switch = line.began + (line.first_hybrid() or float("inf"))
        for label, some in (
            ("while embedding", [a for a in line.warm if a.at < switch]),
            ("after", [a for a in line.warm if a.at >= switch]),
        ):
            if some:
                ms = np.array([a.ms for a in some])
                rows.append(
                    f"warm requests {label}: {len(some)}, p50 {np.percentile(ms, 50):.1f} ms, "
                    f"p99 {np.percentile(ms, 99):.1f} ms, max {ms.max():.1f} ms"
                )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", nargs="+", default=["arcade"], help="bench folder or path")
    parser.add_argument("--tools", type=int, default=300, help="catalog size (sampled)")
    parser.add_argument("--queries", type=int, default=400, help="queries used (sampled)")
    parser.add_argument("--rate", type=float, default=5.0, help="requests per second")
    parser.add_argument("--after", type=int, default=50, help="hybrid answers before stopping")
    parser.add_argument("--limit", type=float, default=300.0, help="longest run, seconds")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-timeline", action="store_true")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the service")
    parser.add_argument("--warm", help="folder of a catalog kept warm and asked meanwhile")
    parser.add_argument("--warm-rate", type=float, default=75.0, help="its requests per second")
    args = parser.parse_args(argv)
    env = dict(kv.split("=", 1) for kv in args.env)
    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load_avg}")
    warm = load(args.warm, 300, 400) if args.warm else None
    for folder in args.datasets:
        data = load(folder, args.tools, args.queries)
        if not args.skip_quality:
            q = quality(data)
            share = 100 * q["static"][0] / max(q["hybrid"][0], 1e-9)
            cells = ", ".join(f"{k} R@5 {r:.1f} empty {e:.1f}%" for k, (r, e) in q.items())
            print(f"{data.name} ({len(data.tools)} tools, {len(data.queries)} queries): {cells}")
            print(f"{data.name}: first (static) answer R@5 = {share:.1f}% of the warm answer's")
        if not args.skip_timeline:
            line = timeline(
                data, args.rate, args.after, args.limit, env, warm=warm, warm_rate=args.warm_rate
            )
            print(report(data, line))
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
