"""What the second encoder costs over HTTP: ``python -m loadtests.second_encoder``.

For each value of ``TOOL_SELECTOR_SECOND_ENCODER`` (default: ``false`` then ``true``) a real
service on loopback, warmed (``TOOL_SELECTOR_WARMUP_FILE``) with a 300- and a 4,000-tool
Seal-Tools catalog from a redis-server whose data stays in ``loadtests/.cache/`` (so each
model embeds those tools once across runs; MiniLM's vectors serve both settings), answers,
one request at a time:

- ``new @300``: never-seen patterns (distinct Seal-Tools sentences and keyword patterns)
  over the warm 300-tool catalog: each pays its query encode(s); the same requests again
  by pattern length (under 100, 100-199, 200-299 characters);
- ``repeated @300``: one pattern again and again (the query cache answers);
- ``long new @4,000``: never-seen 300-420 character Seal-Tools sentences over the warm
  4,000-tool catalog;
- ``first answer, new @300``: the first request of a 300-tool catalog no run sent before
  (generated from the clock; its path header and latency), then the same request every
  0.25 s until it is answered ``hybrid`` (MiniLM's tool vectors in: the second model's
  follow in the background);
- RSS of the service (its process group) after the warm-up and at the end.

Then, in process, the seconds each model takes to embed a never-seen 300-tool catalog's tool
texts in the service's batches of 16 on one thread (``--embed-tools``), the cost of a new
catalog with both models.

Prints one markdown row per setting and measurement with p50 / p99 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from tests.support import ServiceProcess

from loadtests import workload
from loadtests.bench import BenchRedis, _start

SEARCH = "/v1/tool-discovery/search"
REDIS_DIR = Path(__file__).parent / ".cache" / "second-encoder"
HEADERS = {"content-type": "application/json"}
#: Pattern lengths (characters, half-open) the never-seen @300 requests are also shown by:
#: a new pattern costs its encode per token.
LENGTHS = ((0, 100), (100, 200), (200, 300))


def rss_mb(proc: ServiceProcess) -> float:
    """Resident memory of the service's process group (granian's main process and worker)."""
    out = subprocess.run(
        ["ps", "-o", "rss=", "-g", str(os.getpgid(proc.proc.pid))],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return sum(int(x) for x in out.split()) / 1024


def timed(client: httpx.Client, url: str, bodies: list[bytes]) -> tuple[list[float], list[str]]:
    """Milliseconds of each request sent one at a time, and each answer's path header."""
    ms, paths = [], []
    for body in bodies:
        t0 = time.perf_counter()
        r = client.post(url + SEARCH, content=body, headers=HEADERS)
        ms.append(1000 * (time.perf_counter() - t0))
        r.raise_for_status()
        paths.append(r.headers.get("x-tool-selector-ranking", "?"))
    return ms, paths


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def row(setting: str, name: str, ms: list[float], paths: list[str]) -> str:
    answered = ", ".join(f"{k} {paths.count(k)}" for k in sorted(set(paths)))
    return (
        f"| {setting} | {name} | {len(ms)} | {statistics.median(ms):.1f} | {p(ms, 0.99):.1f} "
        f"| {answered} |"
    )


def measure(setting: str, args: argparse.Namespace, tmp: Path, redis_url: str) -> list[str]:
    rng = random.Random(7)
    small, large = workload.catalog(300), workload.catalog(args.large, offset=76)
    warmup = tmp / "warmup.jsonl"
    catalogs = (small, large) if args.large else (small,)
    warmup.write_text("\n".join(json.dumps({"tools": t}) for t in catalogs))
    env = {
        **dict(x.split("=", 1) for x in args.env),
        "TOOL_SELECTOR_SECOND_ENCODER": setting,
        "TOOL_SELECTOR_LOG_LEVEL": "WARNING",
        "TOOL_SELECTOR_WARMUP_FILE": str(warmup),
        "TOOL_SELECTOR_REDIS_URL": redis_url,
    }
    began = time.monotonic()
    proc = _start(tmp, env)
    out = [f"<!-- {setting}: ready in {time.monotonic() - began:.0f} s -->"]
    try:
        corpus = workload.corpus()
        sentences = list(dict.fromkeys(corpus.sentences))
        rng.shuffle(sentences)
        short = [s for s in sentences if len(s) < 300][: args.n // 2]
        keywords = list(dict.fromkeys(corpus.keywords))
        rng.shuffle(keywords)
        new = [x for pair in zip(short, keywords, strict=False) for x in pair]
        long = [s for s in sentences if 300 <= len(s) <= 420][: args.n_long]
        with httpx.Client(timeout=120) as client:
            rss = rss_mb(proc)
            ms, paths = timed(client, proc.url, [workload.body(x, small) for x in new])
            out.append(row(setting, "new @300", ms, paths))
            for low, high in LENGTHS:  # the same requests by pattern length
                got = [
                    (m, a) for x, m, a in zip(new, ms, paths, strict=True) if low <= len(x) < high
                ]
                if got:
                    name = f"new @300, {low}-{high - 1} chars"
                    out.append(row(setting, name, *map(list, zip(*got, strict=True))))
            ms, paths = timed(client, proc.url, [workload.body(new[0], small)] * args.n)
            out.append(row(setting, "repeated @300", ms, paths))
            if args.large:
                ms, paths = timed(client, proc.url, [workload.body(x, large) for x in long])
                chars = statistics.mean(len(x) for x in long)
                out.append(row(setting, f"long new @{args.large:,} ({chars:.0f} chars)", ms, paths))
            firsts, seconds_to_hybrid = [], []
            unseen = random.Random(time.time_ns())  # catalogs no run has sent before
            for i in range(args.fresh):
                fresh = workload.body(new[i], workload.fresh_catalog(unseen, 300))
                ms, paths = timed(client, proc.url, [fresh])
                firsts.append((ms[0], paths[0]))
                t0 = time.monotonic()
                while paths[-1] != "hybrid" and time.monotonic() - t0 < 900:
                    time.sleep(0.25)
                    _, paths = timed(client, proc.url, [fresh])
                seconds_to_hybrid.append(time.monotonic() - t0 + firsts[-1][0] / 1000)
            out.append(
                row(setting, "first answer, new @300", *map(list, zip(*firsts, strict=True)))
            )
            out.append(
                f"| {setting} | new @300 catalog embedded (s, first request to hybrid) "
                f"| {args.fresh} | {statistics.median(seconds_to_hybrid):.1f} "
                f"| {max(seconds_to_hybrid):.1f} | - |"
            )
            out.append(
                f"| {setting} | RSS after warm-up / at the end (MB) | - | {rss:.0f} "
                f"| {rss_mb(proc):.0f} | - |"
            )
    finally:
        proc.stop()
    return out


def embed_times(tools: int) -> list[str]:
    """Seconds each model takes to embed a never-seen catalog's tool texts, batches of 16."""
    from tool_selector.embeddings.encoder import parts_of  # noqa: PLC0415
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.pipeline.tool_vectors import DEFAULT_BATCH  # noqa: PLC0415
    from tool_selector.ranking.catalog import build_catalog  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415
    from tool_selector_client.wire import Tool  # noqa: PLC0415

    raw = workload.fresh_catalog(random.Random(11), tools)
    catalog = build_catalog([Tool(name=t["name"], description=t["description"]) for t in raw])
    texts = [t.dense_text() for t in catalog.texts]
    encoder = encoder_from_settings(Settings())
    assert encoder is not None
    out = []
    for model in parts_of(encoder):
        model.encode(texts[:DEFAULT_BATCH])  # sessions and buffers made before timing
        t0 = time.perf_counter()
        for at in range(0, len(texts), DEFAULT_BATCH):
            model.encode(texts[at : at + DEFAULT_BATCH])
        seconds = time.perf_counter() - t0
        out.append(
            f"| in process | embed {tools} new tool texts: {model.model_id} | {tools} "
            f"| {seconds:.1f} s | {tools / seconds:.0f} texts/s | - |"
        )
    return out


def encode_times(n: int) -> list[str]:
    """In process: p50 / p99 ms of a new 300-420 character pattern's query vector, MiniLM
    alone, then both models through the selector (the second on its helper thread)."""
    from tool_selector.embeddings.encoder import Ensemble, parts_of  # noqa: PLC0415
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.pipeline.selector import Selector  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    rng = random.Random(5)
    sentences = [s for s in dict.fromkeys(workload.corpus().sentences) if 300 <= len(s) <= 420]
    rng.shuffle(sentences)
    encoder = encoder_from_settings(Settings())
    assert encoder is not None
    out = []
    for name, model in (("MiniLM alone", parts_of(encoder)[0]), ("both models", encoder)):
        selector = Selector(encoder=model)  # no query cache: every pattern is encoded
        vectors, ensemble = selector.query_vectors, Ensemble.of(model)
        vectors.vector(ensemble, "warm up the sessions")
        ms = []
        for text in sentences[:n]:
            t0 = time.perf_counter()
            vectors.vector(ensemble, text)
            ms.append(1000 * (time.perf_counter() - t0))
        chars = statistics.mean(len(x) for x in sentences[:n])
        out.append(
            f"| in process | new {chars:.0f}-char pattern's query vector, {name} | {n} "
            f"| {statistics.median(ms):.1f} | {p(ms, 0.99):.1f} | - |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", nargs="+", default=["false", "true"])
    parser.add_argument("--n", type=int, default=200, help="requests per measurement")
    parser.add_argument("--n-long", type=int, default=100, help="long patterns at 4,000 tools")
    parser.add_argument("--fresh", type=int, default=3, help="never-seen 300-tool catalogs")
    parser.add_argument("--embed-tools", type=int, default=300, help="0: skip the in-process")
    parser.add_argument("--large", type=int, default=4000, help="large catalog (0: none)")
    parser.add_argument("--encode", type=int, default=50, help="in-process long encodes (0: none)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another setting for every service run (TOOL_SELECTOR_MULTI_STEP=false, ...)",
    )
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="tool-selector-second-"))
    shared = BenchRedis(REDIS_DIR)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    given = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"# command: PYTHONPATH=service:. python -m loadtests.second_encoder {given}")
    print("| second encoder | measurement | requests | p50 ms | p99 ms | answered by |")
    print("|---|---|---|---|---|---|")
    try:
        for setting in args.settings:
            for line in measure(setting, args, tmp, shared.url):
                print(line, flush=True)
            shared.save()
    finally:
        shared.stop()
    if args.embed_tools:
        for line in embed_times(args.embed_tools):
            print(line, flush=True)
    if args.encode:
        for line in encode_times(args.encode):
            print(line, flush=True)
    print(f"# done {time.strftime('%H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
