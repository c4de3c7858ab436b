"""Every new request inside the budget (issue W): ``python -m loadtests.budget``.

One run prints, for a real service on loopback (no Redis, no warm-up: every catalog is new
to it), one request at a time over HTTP:

- **time to every encoder**: the first answer on a catalog nobody has sent (its path and
  milliseconds), then the seconds until it is answered ``hybrid`` (the first model's tool
  vectors in) and until ``X-Tool-Selector-Embedded: complete`` (every encoder's), at about
  300 tools (the agent catalog) and at 4,000 (Seal-Tools);
- **new patterns, warm catalogs**: never-seen short agent requests at about 300 and at
  4,000 tools (each pattern sent once: no query cache helps), never-seen 300-420 character
  Seal-Tools instructions at about 300 and at 4,000 (``--n-long`` each, none sent twice),
  and one pattern repeated at about 300 and at 4,000 (the
  same body resent: its catalog, its pattern's vectors cached), p50 / p99 ms;
- **query encodes**: in process, each model's query vector of the same new short requests
  and long instructions, one after another on one thread, and both through the selector's
  ``QueryVectors`` (the second model on its helper thread), p50 / p99 ms;
- **first answers**: in process, ``tool-selector eval`` over the agent set (every split):
  R@5 and empty answers of the first answer on a new catalog (``service cold (static)``)
  against the fully embedded warm answer (``service``), and the share.

No test asserts a time (CI runs on shared machines): this prints the numbers and the
command; docs/performance.md keeps the latest with date and machine.
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
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from tests.support import ServiceProcess

from loadtests import workload
from loadtests.bench import _start
from loadtests.coldstart import as_tool
from loadtests.second_encoder import p, rss_mb
from loadtests.second_encoder import timed as each_timed

SEARCH = "/v1/tool-discovery/search"
HEADERS = {"content-type": "application/json"}
AGENT = Path(__file__).resolve().parent.parent / "eval" / "agent"
#: A short request: the agent set's requests under this many characters.
SHORT = 100


def agent_catalog() -> list[dict[str, Any]]:
    """The agent set's tools as the proxy sends them (name, description, definition)."""
    rows = (json.loads(x) for x in (AGENT / "tools.jsonl").read_text().splitlines() if x)
    return [as_tool(row)[1] for row in rows]


def agent_requests(rng: random.Random) -> list[str]:
    """The agent set's distinct requests under ``SHORT`` characters, shuffled."""
    rows = [json.loads(x) for x in (AGENT / "queries.jsonl").read_text().splitlines()]
    short = [q for q in dict.fromkeys(r["query"] for r in rows) if len(q) < SHORT]
    rng.shuffle(short)
    return short


def post(client: httpx.Client, url: str, body: bytes) -> tuple[float, httpx.Response]:
    t0 = time.perf_counter()
    r = client.post(url + SEARCH, content=body, headers=HEADERS)
    ms = 1000 * (time.perf_counter() - t0)
    r.raise_for_status()
    return ms, r


def to_every_encoder(client: httpx.Client, url: str, body: bytes, label: str) -> list[str]:
    """The first answer on a new catalog, then seconds to ``hybrid`` and to ``complete``."""
    t0 = time.monotonic()
    ms, r = post(client, url, body)
    first = r.headers.get("x-tool-selector-ranking", "?")
    hybrid = complete = None
    while complete is None and time.monotonic() - t0 < 1800:
        path = r.headers.get("x-tool-selector-ranking")
        if hybrid is None and path == "hybrid":
            hybrid = time.monotonic() - t0
        if r.headers.get("x-tool-selector-embedded") == "complete":
            complete = time.monotonic() - t0
            break
        time.sleep(0.25)
        _, r = post(client, url, body)
    return [
        f"| first answer, new catalog {label} | 1 | {ms:.1f} | - | {first} |",
        f"| new catalog {label}: seconds to `hybrid` / to every encoder (`complete`) | 1 "
        f"| {_s(hybrid)} | {_s(complete)} | - |",
    ]


def _s(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.1f} s"


def timed(client: httpx.Client, url: str, label: str, bodies: list[bytes]) -> str:
    """One row: p50 / p99 ms of ``bodies`` sent one at a time, and the paths that answered."""
    ms, paths = each_timed(client, url, bodies)
    answered = ", ".join(f"{k} {paths.count(k)}" for k in sorted(set(paths)))
    return f"| {label} | {len(ms)} | {statistics.median(ms):.1f} | {p(ms, 0.99):.1f} | {answered} |"


def service_rows(args: argparse.Namespace, tmp: Path) -> list[str]:
    rng = random.Random(args.seed)
    small, large = agent_catalog(), workload.catalog(args.large, offset=76)
    short = agent_requests(rng)
    half = len(short) // 2
    sentences = list(dict.fromkeys(workload.corpus().sentences))
    rng.shuffle(sentences)
    # the first for the time to every encoder, then n_long for each catalog size
    long = [s for s in sentences if 300 <= len(s) <= 420][: 1 + 2 * args.n_long]
    if len(long) < 1 + 2 * args.n_long:
        raise SystemExit(f"--n-long {args.n_long}: only {len(long)} instructions of 300-420 chars")
    cut = 1 + args.n_long
    env = {**dict(x.split("=", 1) for x in args.env), "TOOL_SELECTOR_LOG_LEVEL": "WARNING"}
    began = time.monotonic()
    proc: ServiceProcess = _start(tmp, env)
    out = [f"<!-- ready in {time.monotonic() - began:.0f} s -->"]
    n = len(small)
    try:
        with httpx.Client(timeout=120) as client:
            url = proc.url
            out += to_every_encoder(client, url, workload.body(short[0], small), f"@{n}")
            out += to_every_encoder(client, url, workload.body(long[0], large), f"@{args.large:,}")
            for _ in range(args.rounds):
                out.append(
                    timed(
                        client,
                        url,
                        f"new short request @{n}",
                        [workload.body(x, small) for x in short[1:half]],
                    )
                )
                out.append(
                    timed(
                        client,
                        url,
                        f"new short request @{args.large:,}",
                        [workload.body(x, large) for x in short[half:]],
                    )
                )
                out.append(
                    timed(
                        client,
                        url,
                        f"new {_chars(long[cut:])}-character instruction @{n}",
                        [workload.body(x, small) for x in long[cut:]],
                    )
                )
                out.append(
                    timed(
                        client,
                        url,
                        f"new {_chars(long[1:cut])}-character instruction @{args.large:,}",
                        [workload.body(x, large) for x in long[1:cut]],
                    )
                )
                for label, tools in ((f"@{n}", small), (f"@{args.large:,}", large)):
                    repeated = [workload.body(short[1], tools)] * args.n_repeat
                    out.append(timed(client, url, f"repeated request {label}", repeated))
                short, long = _renewed(short, long)
            out.append(f"| RSS at the end (MB) | - | {rss_mb(proc):.0f} | - | - |")
    finally:
        proc.stop()
    return out


def _chars(texts: list[str]) -> str:
    return f"{statistics.mean(len(x) for x in texts):.0f}"


def _renewed(short: list[str], long: list[str]) -> tuple[list[str], list[str]]:
    """The same requests made new again for another round (the query cache knows them):
    a prefix the tokenizer reads as one more word."""
    return [f"please {x}" for x in short], [f"Please {x}" for x in long]


def encode_rows(n: int, seed: int) -> list[str]:
    """In process: p50 / p99 ms of each model's query vector and of both side by side."""
    from tool_selector.embeddings.encoder import Ensemble, encode_query, parts_of  # noqa: PLC0415
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.lru import BoundedLRU  # noqa: PLC0415
    from tool_selector.pipeline.query_vectors import QueryVectors  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    rng = random.Random(seed)
    sentences = list(dict.fromkeys(workload.corpus().sentences))
    rng.shuffle(sentences)
    texts = {
        "short request": agent_requests(rng)[:n],
        "300-420 character instruction": [s for s in sentences if 300 <= len(s) <= 420][:n],
    }
    encoder = encoder_from_settings(Settings())
    assert encoder is not None
    ensemble, vectors = Ensemble.of(encoder), QueryVectors(BoundedLRU(0))
    out = []
    for kind, patterns in texts.items():
        ways = {m.model_id: partial(_encode_one, encode_query, m) for m in parts_of(encoder)}
        ways["both, side by side"] = partial(_encode_both, vectors, ensemble)
        for way, run in ways.items():
            run("warm up the sessions")
            ms = []
            for text in patterns:
                t0 = time.perf_counter()
                run(text)
                ms.append(1000 * (time.perf_counter() - t0))
            out.append(
                f"| in process: {kind}'s query vector, {way} | {len(ms)} "
                f"| {statistics.median(ms):.1f} | {p(ms, 0.99):.1f} | - |"
            )
    return out


def _encode_one(encode: Any, model: Any, text: str) -> None:
    encode(model, [text])


def _encode_both(vectors: Any, ensemble: Any, text: str) -> None:
    """Both models' vectors of ``text`` as a new pattern gets them (``vectors`` caches none)."""
    vectors.vector(ensemble, text)


def first_answer_rows(tmp: Path) -> list[str]:
    """``tool-selector eval`` over the agent set, every split: cold (static) against warm."""
    out_file = tmp / "agent.json"
    command = [
        sys.executable,
        "-m",
        "tool_selector",
        "eval",
        "--dataset",
        "agent",
        "--split",
        "all",
        "--no-progress",
        "--output",
        str(out_file),
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    rankers = json.loads(out_file.read_text())["results"][0]["rankers"]
    warm, cold = rankers["service"], rankers["service cold (static)"]
    share = 100 * cold["r@5"] / warm["r@5"]
    return [
        f"| first answers, agent set (in process): R@5 cold / warm | - | {cold['r@5']:.1f} "
        f"| {warm['r@5']:.1f} | {share:.1f}% of warm |",
        f"| first answers, agent set: empty % cold / warm | - | {cold['empty%']:.1f} "
        f"| {warm['empty%']:.1f} | - |",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=4000, help="tools of the large catalog")
    parser.add_argument(
        "--n-long", type=int, default=100, help="long instructions at each catalog size"
    )
    parser.add_argument("--n-repeat", type=int, default=100, help="repeated requests")
    parser.add_argument("--rounds", type=int, default=2, help="latency rows, each new again")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-quality", action="store_true", help="skip the in-process eval")
    parser.add_argument("--encode", type=int, default=100, help="in-process encodes (0: none)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting for the service (TOOL_SELECTOR_SECOND_ENCODER=false, ...)",
    )
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="tool-selector-budget-"))
    given = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    print(f"# command: PYTHONPATH=service:. python -m loadtests.budget {given}")
    print("| measurement | n | p50 ms | p99 ms | answered by |")
    print("|---|---:|---:|---:|---|")
    for line in service_rows(args, tmp):
        print(line, flush=True)
    if args.encode:
        for line in encode_rows(args.encode, args.seed):
            print(line, flush=True)
    if not args.no_quality:
        for line in first_answer_rows(tmp):
            print(line, flush=True)
    print(f"# done {time.strftime('%H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
