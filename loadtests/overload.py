"""Overload run: N concurrent clients hammer one service for T seconds, then report.

    python loadtests/overload.py --url http://127.0.0.1:8080 --clients 128 --seconds 20

Prints status counts and latency percentiles (all answers, and 200s only), to compare a
service with the in-flight cap (TOOL_SELECTOR_MAX_IN_FLIGHT=8) against one without
(a huge cap). Loopback only; bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter

import httpx

TOOLS = [
    {"name": f"{server}__{verb}_{thing}", "description": f"{verb} a {thing} in {server}"}
    for server in ("github", "slack", "jira", "files", "calendar")
    for verb in ("create", "read", "update", "delete", "list")
    for thing in ("issue", "message", "ticket", "file")
]
PATTERNS = ["create issue", "send slack message", "read file", "list tickets", "update event"]
BODIES = [json.dumps({"pattern": p, "top_k": 5, "tools": TOOLS}).encode() for p in PATTERNS]
HEADERS = {"Content-Type": "application/json"}


async def client(
    http: httpx.AsyncClient, url: str, stop: float, out: list[tuple[int, float]], i: int
) -> None:
    n = 0
    while time.monotonic() < stop:
        body = BODIES[(i + n) % len(BODIES)]
        n += 1
        started = time.perf_counter()
        try:
            r = await http.post(url, content=body, headers=HEADERS)
            status = r.status_code
        except httpx.HTTPError:
            status = 0
        out.append((status, time.perf_counter() - started))
        if status == 503:
            await asyncio.sleep(0.01)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def run(url: str, clients: int, seconds: float) -> dict[str, object]:
    out: list[tuple[int, float]] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=10, limits=limits) as http:
        stop = time.monotonic() + seconds
        await asyncio.gather(
            *(client(http, url + "/v1/tool-discovery/search", stop, out, i) for i in range(clients))
        )
    ok = [s for code, s in out if code == 200]
    every = [s for _, s in out]
    return {
        "clients": clients,
        "seconds": seconds,
        "statuses": dict(Counter(code for code, _ in out)),
        "ok_per_s": round(len(ok) / seconds, 1),
        "ok_ms": {q: round(pct(ok, q / 100), 1) for q in (50, 95, 99)}
        | {"max": round(max(ok, default=0) * 1000, 1)},
        "all_ms": {q: round(pct(every, q / 100), 1) for q in (50, 95, 99)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--clients", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.url, args.clients, args.seconds))))


if __name__ == "__main__":
    main()
