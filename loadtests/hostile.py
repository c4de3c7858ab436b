"""Hostile-client scenarios, each against a service it starts itself on loopback (bounded):

    PYTHONPATH=service python -m loadtests.hostile slow-senders --slow 4 --seconds 20
    PYTHONPATH=service python -m loadtests.hostile overload --rate 600 --connections 512
    PYTHONPATH=service python -m loadtests.hostile soak --catalogs 300 --tools 1000

- ``slow-senders``: N connections send a search body at 1 byte/s (reconnecting whenever the
  service answers or closes) while valid requests arrive open-loop at ``--rate`` over
  keep-alive connections; reports the valid requests' latency and statuses.
- ``overload``: valid requests open-loop at ``--rate`` over a pool of ``--connections``
  keep-alive connections (a connection is reused as soon as its answer is in; a
  ``Connection: close`` answer replaces it); "lost" counts requests that got no answer at all
  (the connection ended first).
- ``soak``: ``--catalogs`` distinct never-seen catalogs of ``--tools`` tools, one at a time,
  with the worker's RSS sampled from /proc after each; ``--env KEY=VALUE`` sets service
  settings (e.g. the memory bounds).

``--baseline DIR`` serves another checkout's ``service/`` folder (a ``git worktree`` of the
commit before, say) for a before/after comparison. Latency is measured from each request's
scheduled send time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from tests.support import ServiceProcess, start_service, warm_catalog

from loadtests import workload
from loadtests.overload import PATTERNS, TOOLS

SEARCH = "/v1/tool-discovery/search"


def request_bytes(port: int, body: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    head = (
        f"POST {SEARCH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
    )
    return head.encode() + body


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """(status, connection closes) of one Content-Length framed answer."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    found = re.search(rb"(?i)content-length:\s*(\d+)", head)
    await reader.readexactly(int(found.group(1)) if found else 0)
    return status, b"connection: close" in head.lower()


class Pool:
    """Keep-alive connections handed out one request at a time."""

    def __init__(self, port: int, size: int) -> None:
        self.port = port
        self.size = size
        self.idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.Queue()
        )

    async def fill(self) -> None:
        for _ in range(self.size):
            self.idle.put_nowait(await asyncio.open_connection("127.0.0.1", self.port))

    async def exchange(self, raw: bytes) -> tuple[int, str]:
        """Send one request; (status, "") or (0, why it got no answer)."""
        reader, writer = await self.idle.get()
        keep = False
        try:
            writer.write(raw)
            status, closes = await read_answer(reader)
            keep = not closes
            return status, ""
        except (OSError, asyncio.IncompleteReadError) as exc:
            return 0, type(exc).__name__
        finally:
            if keep:
                self.idle.put_nowait((reader, writer))
            else:
                writer.close()
                self.idle.put_nowait(await asyncio.open_connection("127.0.0.1", self.port))


async def open_loop(
    rate: float, seconds: float, one: Callable[[int], Awaitable[tuple[int, str]]]
) -> tuple[list[tuple[int, str, float]], int]:
    """Fire ``one(i)`` at ``rate`` per second for ``seconds``; (status, why, latency) each."""
    out: list[tuple[int, str, float]] = []
    began = time.perf_counter()

    async def timed(i: int, scheduled: float) -> None:
        status, why = await one(i)
        out.append((status, why, time.perf_counter() - scheduled))

    tasks = []
    n = int(rate * seconds)
    for i in range(n):
        scheduled = began + i / rate
        await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
        tasks.append(asyncio.create_task(timed(i, scheduled)))
    await asyncio.gather(*tasks)
    return out, n


def summary(out: list[tuple[int, str, float]], sent: int, seconds: float) -> dict[str, Any]:
    ok = sorted(s for status, _, s in out if status == 200)

    def pct(q: float) -> float | None:
        return round(ok[min(len(ok) - 1, int(q * len(ok)))] * 1000, 1) if ok else None

    return {
        "sent": sent,
        "statuses": dict(Counter(status for status, _, _ in out)),
        "lost": dict(Counter(why for status, why, _ in out if status == 0)),
        "ok_per_s": round(len(ok) / seconds, 1),
        "ok_ms": {"p50": pct(0.5), "p95": pct(0.95), "p99": pct(0.99), "max": pct(1.0)},
    }


async def slow_sender(port: int, stop: float, answers: Counter[int]) -> None:
    body = workload.body("slow", TOOLS[:10])
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request_bytes(port, b"", len(body)))
            answer = asyncio.create_task(read_answer(reader))
            for byte in body:
                if answer.done() or time.monotonic() >= stop:
                    break
                writer.write(bytes([byte]))
                await asyncio.sleep(1.0)
            if answer.done() and not answer.exception():
                answers[answer.result()[0]] += 1
            answer.cancel()
            writer.close()
        except OSError:
            answers[0] += 1
            await asyncio.sleep(0.1)


async def slow_senders(service: ServiceProcess, args: argparse.Namespace) -> dict[str, Any]:
    port = int(service.url.rsplit(":", 1)[1])
    bodies = [request_bytes(port, workload.body(p, TOOLS)) for p in PATTERNS]
    pool = Pool(port, args.connections)
    await pool.fill()
    answers: Counter[int] = Counter()
    stop = time.monotonic() + args.seconds + 1
    senders = [asyncio.create_task(slow_sender(port, stop, answers)) for _ in range(args.slow)]
    await asyncio.sleep(1.0)  # the slow senders connected and sending
    out, sent = await open_loop(
        args.rate, args.seconds, lambda i: pool.exchange(bodies[i % len(bodies)])
    )
    await asyncio.gather(*senders)
    return {
        "slow_senders": args.slow,
        "rate": args.rate,
        **summary(out, sent, args.seconds),
        "slow_answers": dict(answers),
    }


async def overload(service: ServiceProcess, args: argparse.Namespace) -> dict[str, Any]:
    port = int(service.url.rsplit(":", 1)[1])
    bodies = [request_bytes(port, workload.body(p, overload_tools(args))) for p in PATTERNS]
    pool = Pool(port, args.connections)
    await pool.fill()
    out, sent = await open_loop(
        args.rate, args.seconds, lambda i: pool.exchange(bodies[i % len(bodies)])
    )
    return {
        "rate": args.rate,
        "connections": args.connections,
        "body_bytes": len(bodies[0]),
        **summary(out, sent, args.seconds),
    }


def warm(service: ServiceProcess, tools: list[dict[str, Any]]) -> None:
    """The catalog built and embedded (answered hybrid), and every pattern encoded once."""
    warm_catalog(service.url, tools, timeout=600)
    for pattern in PATTERNS:
        httpx.post(service.url + SEARCH, content=workload.body(pattern, tools), timeout=60)


def overload_tools(args: argparse.Namespace) -> list[dict[str, Any]]:
    return workload.catalog(args.catalog_tools) if args.catalog_tools else TOOLS


def worker(service: ServiceProcess) -> tuple[Path, float]:
    """/proc folder and RSS (MB) of the service's largest process (granian's worker)."""
    best, where = 0, Path("/proc/self")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != service.proc.pid:  # process group (start_new_session)
                continue
            status = (stat.parent / "status").read_text()
        except OSError:
            continue
        found = re.search(r"VmRSS:\s+(\d+) kB", status)
        if found and int(found.group(1)) > best:
            best, where = int(found.group(1)), stat.parent
    return where, round(best / 1024, 1)


def worker_rss_mb(service: ServiceProcess) -> float:
    return worker(service)[1]


def rss_by_mapping(service: ServiceProcess) -> dict[str, float]:
    """The worker's RSS split by mapping (smaps): the brk heap, anonymous maps (malloc's
    per-thread arenas and large allocations such as NumPy arrays), and files (code, model)."""
    folder, _ = worker(service)
    kinds: Counter[str] = Counter()
    kind = "anon"
    for line in (folder / "smaps").read_text().splitlines():
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            parts = line.split()
            name = parts[5] if len(parts) > 5 else ""
            kind = "heap" if name == "[heap]" else "file" if name.startswith("/") else "anon"
        elif line.startswith("Rss:"):
            kinds[kind] += int(line.split()[1])
    return {k: round(v / 1024, 1) for k, v in sorted(kinds.items())}


async def soak(service: ServiceProcess, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(13)
    samples: list[tuple[int, float]] = [(0, worker_rss_mb(service))]
    statuses: Counter[int] = Counter()
    began = time.monotonic()
    async with httpx.AsyncClient(timeout=60) as client:
        for i in range(1, args.catalogs + 1):
            body = workload.body(rng.choice(PATTERNS), workload.fresh_catalog(rng, args.tools))
            r = await client.post(
                service.url + SEARCH, content=body, headers={"content-type": "application/json"}
            )
            statuses[r.status_code] += 1
            if i % args.every == 0 or i == args.catalogs:
                samples.append((i, worker_rss_mb(service)))
                print(f"{i:4d} catalogs: worker RSS {samples[-1][1]} MB", file=sys.stderr)
    await asyncio.sleep(args.settle)
    samples.append((args.catalogs, worker_rss_mb(service)))
    return {
        "rss_by_mapping_mb": rss_by_mapping(service),
        "catalogs": args.catalogs,
        "tools": args.tools,
        "seconds": round(time.monotonic() - began, 1),
        "statuses": dict(statuses),
        "rss_mb": samples,
        "env": args.env,
    }


SCENARIOS = {"slow-senders": slow_senders, "overload": overload, "soak": soak}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=float, default=50, help="valid requests per second")
    parser.add_argument("--connections", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--slow", type=int, default=4, help="slow senders")
    parser.add_argument(
        "--catalog-tools",
        type=int,
        default=0,
        help="overload: a warm benchmark catalog of this many tools (0: 100 small tools)",
    )
    parser.add_argument("--catalogs", type=int, default=300)
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--every", type=int, default=25, help="soak: RSS sample interval")
    parser.add_argument("--settle", type=float, default=5, help="soak: seconds before last RSS")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the service")
    parser.add_argument("--baseline", help="serve this service/ folder instead (before/after)")
    args = parser.parse_args(argv)
    env = dict(kv.split("=", 1) for kv in args.env)
    if args.baseline:
        env["PYTHONPATH"] = args.baseline
    with tempfile.TemporaryDirectory() as tmp:
        service = start_service(Path(tmp), env, timeout=600, deadline=None)
        try:
            if args.scenario == "slow-senders":
                warm(service, TOOLS)
            elif args.scenario == "overload":
                warm(service, overload_tools(args))
            result = asyncio.run(SCENARIOS[args.scenario](service, args))
        finally:
            service.stop()
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
