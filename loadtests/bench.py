"""Bounded open-loop benchmark: ``python -m loadtests.bench [--quick]``.

Starts the service on loopback (``tool-selector serve``, warm-up file with the warm catalogs),
offers requests at a fixed rate for a fixed time per scenario (latency measured from each
request's *scheduled* send time, so queueing is counted), then does the same against the
naive baseline (``TOOL_SELECTOR_PIPELINE=naive``: rank_bm25 + uncached embeddings per
request) and prints the table and the throughput ratio. ``--update-readme`` rewrites the
table in ``loadtests/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import json
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis
from tests.support import ServiceProcess, free_port, start_service

from loadtests import workload
from loadtests.cpu import CpuSample

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "loadtests" / "README.md"
SEARCH = "/v1/tool-discovery/search"


@dataclass
class Scenario:
    name: str
    rate: float
    bodies: list[bytes]
    expect: str  # ranking path the scenario is about ("hybrid" warm, "static" cold)
    prime: bool = True  # send each distinct body once, one at a time, before the open loop


@dataclass
class Result:
    scenario: str
    server: str
    rate: float
    sent: int = 0
    ok: int = 0
    failed: int = 0
    elapsed: float = 0.0
    latencies: list[float] = field(default_factory=list)
    paths: dict[str, int] = field(default_factory=dict)
    solo: list[float] = field(default_factory=list)
    query_hits: float = float("nan")
    failures: dict[str, int] = field(default_factory=dict)
    #: requests sent a second time because their pooled connection answered nothing
    retried: int = 0
    #: longest the client's own event loop was late waking a 5 ms timer during the open loop:
    #: latency is measured from the scheduled send time, so a stalled client counts as latency
    client_lag: float = 0.0
    #: (seconds into the run, latency, retried) of requests slower than 100 ms, for diagnosis
    slow: list[tuple[float, float, bool]] = field(default_factory=list)
    #: cores busy during the open loop: server / client / everything else / stolen by the host
    cores: str = ""

    def fail(self, reason: str) -> None:
        self.failed += 1
        self.failures[reason] = self.failures.get(reason, 0) + 1

    def pct(self, q: float, solo: bool = False) -> float:
        xs = sorted(self.solo if solo else self.latencies)
        if not xs:
            return float("nan")
        return xs[min(len(xs) - 1, int(q / 100 * len(xs)))] * 1000

    @property
    def throughput(self) -> float:
        return self.ok / self.elapsed if self.elapsed else 0.0


Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class _StaleConnection(Exception):
    """A pooled keep-alive connection the server had already closed: nothing was answered."""


async def _request(
    host: str, port: int, body: bytes, conns: list[Conn], result: Result | None = None
) -> tuple[int, str, bool]:
    """One POST over a pooled keep-alive connection (raw HTTP/1.1: the client must be cheap).

    A pooled connection the server closed while it sat idle answers nothing (an empty status
    line or a reset); like any HTTP client pool, the request is then sent once more on a new
    connection. The retry's time counts: latency is measured from the scheduled send time.
    """
    conn: Conn | None = None
    while conns and conn is None:
        candidate = conns.pop()
        conn = None if candidate[1].is_closing() else candidate
    if conn is not None:
        try:
            return (*await _exchange(host, body, conn, conns), False)
        except _StaleConnection:
            conn[1].close()
            if result is not None:
                result.retried += 1  # shown: a server dropping requests must not hide here
    fresh = await asyncio.open_connection(host, port)
    return (*await _exchange(host, body, fresh, conns), conn is not None)


async def _exchange(host: str, body: bytes, conn: Conn, conns: list[Conn]) -> tuple[int, str]:
    reader, writer = conn
    head = (
        f"POST {SEARCH} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    try:
        writer.write(head + body)
        status_line = await reader.readline()
    except ConnectionResetError as exc:
        raise _StaleConnection from exc
    if not status_line:
        raise _StaleConnection
    length, path, keep = 0, "", True
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        key, _, value = line.decode().partition(":")
        if key.lower() == "content-length":
            length = int(value)
        elif key.lower() == "x-tool-selector-ranking":
            path = value.strip()
        elif key.lower() == "connection" and value.strip().lower() == "close":
            keep = False
    await reader.readexactly(length)
    if keep:
        conns.append((reader, writer))
    else:
        writer.close()
    return int(status_line.split()[1]), path


@contextlib.contextmanager
def _client_gc_paused() -> Iterator[None]:
    """No garbage-collector passes in this (client) process while a scenario is timed.

    The client holds every scenario's bodies and the parsed corpus; a full GC pass over them
    took 70 ms, and every request scheduled meanwhile was sent late and counted as server
    latency (warm @300 p99 54-60 ms, against 8 ms with the pass kept out).
    """
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


async def open_loop(url: str, scenario: Scenario, duration: float, limit: float) -> Result:
    """Send ``rate * duration`` requests on schedule, each on its own task; collect latencies."""
    host, port = url.removeprefix("http://").split(":")
    conns: list[Conn] = []
    result = Result(scenario.name, "", scenario.rate)
    n = max(1, int(scenario.rate * duration))
    # perf_counter, not loop.time(): uvloop's clock has 1 ms resolution
    start = time.perf_counter()
    last_done = start

    async def watch_lag() -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            result.client_lag = max(result.client_lag, time.perf_counter() - before - 0.005)

    async def one(i: int, scheduled: float) -> None:
        nonlocal last_done
        try:
            status, path, retried = await asyncio.wait_for(
                _request(host, int(port), scenario.bodies[i % len(scenario.bodies)], conns, result),
                limit,
            )
        except (
            TimeoutError,
            OSError,
            ValueError,
            _StaleConnection,
            asyncio.IncompleteReadError,
        ) as exc:
            result.fail(type(exc).__name__)
            return
        if status != 200:
            result.fail(f"HTTP {status}")
            return
        now = time.perf_counter()
        last_done = max(last_done, now)
        result.ok += 1
        result.latencies.append(now - scheduled)
        if now - scheduled > 0.1:
            result.slow.append((scheduled - start, now - scheduled, retried))
        result.paths[path] = result.paths.get(path, 0) + 1

    watcher = asyncio.create_task(watch_lag())
    tasks = []
    for i in range(n):
        scheduled = start + i / scenario.rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i, scheduled)))
    await asyncio.gather(*tasks)
    watcher.cancel()
    result.sent = n
    result.elapsed = max(last_done - start, duration)
    for _, writer in conns:
        writer.close()
    return result


async def closed_loop(url: str, bodies: list[bytes]) -> list[float]:
    """``bodies`` sent one after another: service time without queueing."""
    host, port = url.removeprefix("http://").split(":")
    conns: list[Conn] = []
    out = []
    for body in bodies:
        start = time.perf_counter()
        await _request(host, int(port), body, conns)
        out.append(time.perf_counter() - start)
    for _, writer in conns:
        writer.close()
    return out


def _query_cache(url: str) -> tuple[float, float]:
    text = httpx.get(url + "/metrics").text
    found = dict(
        re.findall(r'^tool_selector_query_cache_total\{result="(\w+)"\} (\S+)$', text, re.M)
    )
    return float(found.get("hit", 0)), float(found.get("miss", 0))


def _scenarios(args: argparse.Namespace, naive: bool) -> list[Scenario]:
    rng = random.Random(7)
    pats = workload.patterns(rng, 400)
    small, large = workload.catalog(300), workload.catalog(4000, offset=76)
    warm300 = [workload.body(p, small) for p in pats]
    out = [Scenario("warm @300 tools", args.rate_naive if naive else args.rate, warm300, "hybrid")]
    if naive:
        return out
    out.append(
        Scenario(
            "warm @300, every control",
            args.rate,
            [workload.with_controls(b, small, rng) for b in warm300],
            "hybrid",
        )
    )
    fresh_n = max(1, int(args.rate_fresh * args.duration))
    out.append(
        Scenario(
            "warm @300, new patterns",
            args.rate_fresh,
            [
                workload.body(f"{p} {rng.choice(pats).split()[0]} #{i}", small)
                for i, p in enumerate(workload.patterns(rng, fresh_n + args.solo))
            ],
            "hybrid",
            prime=False,
        )
    )
    out.append(
        Scenario(
            "warm @4,000 tools",
            args.rate_large,
            [workload.body(p, large) for p in pats[:60]],
            "hybrid",
        )
    )
    cold_n = max(1, int(args.rate_cold * args.duration)) + args.solo  # solo uses the tail
    out.append(
        Scenario(
            "cold @300 tools",
            args.rate_cold,
            [
                workload.body(pats[i % len(pats)], workload.fresh_catalog(rng, 300))
                for i in range(cold_n)
            ],
            "static",
            prime=False,
        )
    )
    return out


def _start(tmp: Path, env: dict[str, str]) -> ServiceProcess:
    return start_service(tmp, env, timeout=3600, deadline=None)  # as deployed: 2 s


def _warm(url: str, body: bytes, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = httpx.post(
            url + SEARCH, content=body, headers={"content-type": "application/json"}, timeout=60
        )
        if r.headers.get("x-tool-selector-embedded") == "complete":  # every encoder's vectors
            return
        time.sleep(0.5)
    raise TimeoutError("catalog never became warm")


class BenchRedis:
    """A redis-server whose data survives between benchmark runs (``--redis-dir``), so a
    re-run warms its catalogs from Redis (the shared tier) instead of re-embedding them."""

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(data_dir),
                "--dbfilename",
                "bench.rdb",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if redis.Redis.from_url(self.url).ping():
                    return
            except redis.RedisError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def save(self) -> None:
        client = redis.Redis.from_url(self.url)
        print(f"# redis holds {client.dbsize()} embeddings; saving", file=sys.stderr)
        client.save()

    def stop(self) -> None:
        self.save()
        self.proc.terminate()
        self.proc.wait(30)


def run(args: argparse.Namespace) -> list[Result]:
    results: list[Result] = []
    tmp = Path(tempfile.mkdtemp(prefix="tool-selector-bench-"))
    shared = None if args.no_redis else BenchRedis(args.redis_dir)
    warmup = tmp / "warmup.jsonl"
    warmup.write_text(
        "\n".join(
            json.dumps({"tools": t})
            for t in (workload.catalog(300), workload.catalog(4000, offset=76))
        )
    )
    base = {"TOOL_SELECTOR_ENCODER": args.encoder, "TOOL_SELECTOR_LOG_LEVEL": "WARNING"}
    base.update(kv.split("=", 1) for kv in args.env)
    fast_env = {**base, "TOOL_SELECTOR_WARMUP_FILE": str(warmup)}
    if shared:
        fast_env["TOOL_SELECTOR_REDIS_URL"] = shared.url
    servers = [("fast", fast_env)]
    if not args.skip_naive:
        # the baseline needs seconds per request: lift the request deadline and in-flight cap
        # so it is measured rather than refused
        naive_env = {
            **base,
            "TOOL_SELECTOR_ENCODER": args.naive_encoder,
            "TOOL_SELECTOR_PIPELINE": "naive",
            "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "300",
            "TOOL_SELECTOR_MAX_IN_FLIGHT": "256",
        }
        servers.append(("naive", naive_env))
    try:
        for server, env in servers:
            began = time.monotonic()
            proc = _start(tmp, env)
            print(f"# {server} server ready in {time.monotonic() - began:.0f}s", file=sys.stderr)
            if shared and server == "fast":
                shared.save()
            try:
                for scenario in _scenarios(args, naive=server == "naive"):
                    if server == "fast" and not _chosen(scenario, args.only):
                        continue
                    results.append(_measure(proc, server, scenario, args))
                    print(_row(results[-1]), file=sys.stderr)
                    _print_slow(results[-1])
            finally:
                proc.stop()
    finally:
        if shared:
            shared.stop()
    return results


def _chosen(scenario: Scenario, only: list[str] | None) -> bool:
    return not only or any(t in scenario.name for t in only)


def _measure(
    proc: ServiceProcess, server: str, scenario: Scenario, args: argparse.Namespace
) -> Result:
    """Prime (warm scenarios), one-at-a-time requests, then the open loop, on one server."""
    url, group = proc.url, proc.proc.pid  # started in its own session: pid is the group
    if scenario.expect == "hybrid" and server == "fast":
        _warm(url, scenario.bodies[0])
    if scenario.prime and server == "fast":
        solo_bodies = list(dict.fromkeys(scenario.bodies))  # every distinct body once
    else:  # from the end: the cold scenario keeps its tail for this
        n = min(args.solo, 3) if server == "naive" else args.solo
        solo_bodies = [scenario.bodies[-1 - i % len(scenario.bodies)] for i in range(n)]
    with _client_gc_paused():
        solo = asyncio.run(closed_loop(url, solo_bodies))
    before = _query_cache(url)
    with _client_gc_paused():
        cpu_before, began = CpuSample.take(group), time.perf_counter()
        r = asyncio.run(open_loop(url, scenario, args.duration, args.timeout))
        r.cores = CpuSample.take(group).cores_since(cpu_before, time.perf_counter() - began)
    after = _query_cache(url)
    r.server = server
    r.solo = solo
    hits, misses = after[0] - before[0], after[1] - before[1]
    r.query_hits = hits / (hits + misses) if hits + misses else float("nan")
    return r


def _print_slow(r: Result) -> None:
    if r.slow:
        print(
            f"# {len(r.slow)} answers over 100 ms (s into run: ms, * = sent again): "
            + ", ".join(f"{t:.2f}: {ms * 1000:.0f}{'*' * again}" for t, ms, again in r.slow),
            file=sys.stderr,
        )


def _row(r: Result) -> str:
    paths = ", ".join(f"{k or '-'} {v}" for k, v in sorted(r.paths.items()))
    # no query embedded at all (a lexical answer looks nothing up): say so, not "nan%"
    hits = "none looked up" if math.isnan(r.query_hits) else f"{r.query_hits:.0%}"
    why = [f"{k} x{v}" for k, v in sorted(r.failures.items())]
    if r.retried:
        why.append(f"{r.retried} sent again on a new connection")
    failed = f"{r.failed} ({', '.join(why)})" if why else str(r.failed)
    return (
        f"| {r.server} | {r.scenario} | {r.rate:g} | {r.sent} | {r.ok} | {failed} | "
        f"{r.pct(50):.1f} | {r.pct(95):.1f} | {r.pct(99):.1f} | {r.throughput:.1f} | "
        f"{r.pct(50, solo=True):.1f} / {r.pct(99, solo=True):.1f} | {hits} | {paths} | "
        f"{r.client_lag * 1000:.0f} | {r.cores} |"
    )


def table(results: list[Result], args: argparse.Namespace) -> str:
    load = os.getloadavg()
    lines = [
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.node()} "
        f"({os.cpu_count()} CPUs, {platform.processor() or platform.machine()}), "
        f"load average before {args.load_before}, after {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}, "
        f"encoder `{args.encoder}` (naive baseline `{args.naive_encoder}`), "
        f"{args.duration:g}s per scenario.",
        "",
        f"Command: `{' '.join(['python', '-m', 'loadtests.bench', *args.given])}`",
        "",
        "| server | scenario | offered req/s | sent | ok | failed | p50 ms | p95 ms | p99 ms | "
        "throughput req/s | one-at-a-time p50 / p99 ms | query-cache hits (open loop) | "
        "answered by | client loop lag max ms | cores: server / client / rest / stolen |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(r) for r in results]
    fast = next(
        (r for r in results if r.server == "fast" and r.scenario.startswith("warm @300")), None
    )
    naive = next((r for r in results if r.server == "naive"), None)
    if fast and naive and naive.throughput:
        lines += [
            "",
            "Warm @300 throughput ratio fast / naive: "
            f"**{fast.throughput / naive.throughput:.0f}x**",
        ]
    return "\n".join(lines)


def update_readme(text: str) -> None:
    readme = README.read_text()
    block = f"<!-- bench:start -->\n{text}\n<!-- bench:end -->"
    README.write_text(
        re.sub(r"<!-- bench:start -->.*<!-- bench:end -->", block, readme, flags=re.S)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtests.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10 s per scenario (default 30 s)")
    parser.add_argument("--duration", type=float, help="seconds per scenario")
    parser.add_argument("--rate", type=float, default=200, help="warm @300 offered req/s")
    parser.add_argument("--rate-large", type=float, default=40, help="warm @4,000 offered req/s")
    parser.add_argument("--rate-cold", type=float, default=5, help="cold @300 offered req/s")
    parser.add_argument(
        "--rate-fresh", type=float, default=40, help="warm @300 with new patterns, offered req/s"
    )
    parser.add_argument("--rate-naive", type=float, default=4, help="naive offered req/s")
    parser.add_argument("--timeout", type=float, default=30, help="client timeout per request, s")
    parser.add_argument(
        "--encoder", default="onnx-int8", choices=["onnx-int8", "sentence-transformers"]
    )
    parser.add_argument(
        "--naive-encoder",
        default="sentence-transformers",
        choices=["onnx-int8", "sentence-transformers"],
        help="the naive baseline's encoder (default: the full model, as peers run it)",
    )
    parser.add_argument(
        "--solo", type=int, default=40, help="one-at-a-time requests before each open-loop run"
    )
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="run only the fast-server scenarios whose name contains TEXT (repeatable)",
    )
    parser.add_argument(
        "--redis-dir",
        type=Path,
        default=ROOT / "loadtests" / ".cache",
        help="where the benchmark's redis-server keeps embeddings between runs",
    )
    parser.add_argument("--no-redis", action="store_true", help="no shared tier: embed afresh")
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="a setting for the servers"
    )
    parser.add_argument("--update-readme", action="store_true", help="rewrite loadtests/README.md")
    args = parser.parse_args(argv)
    args.given = sys.argv[1:] if argv is None else argv  # what the report's command says
    args.duration = args.duration or (10.0 if args.quick else 30.0)
    args.load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results = run(args)
    text = table(results, args)
    print(text)
    if args.update_readme:
        update_readme(text)
    return 0 if all(r.failed == 0 for r in results if r.server == "fast") else 1


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - granian[uvloop] brings it
        pass
    sys.exit(main())
