"""Overload run: N concurrent keep-alive clients hammer one service for T seconds, then report.

    python loadtests/overload.py --url http://127.0.0.1:8080 --clients 128 --seconds 20

Compares a service with the in-flight cap (default TOOL_SELECTOR_MAX_IN_FLIGHT=4) against one
without (a huge cap). Clients are raw asyncio streams with pre-encoded requests so the load
generator itself stays cheap on a small machine. Reports status counts, client-side latency
percentiles (200s only, and every answer), and the server's own latency histogram
(``tool_selector_request_duration_seconds``) as bucket upper bounds. Loopback only; bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
import urllib.request
from collections import Counter
from urllib.parse import urlsplit

TOOLS = [
    {"name": f"{server}__{verb}_{thing}", "description": f"{verb} a {thing} in {server}"}
    for server in ("github", "slack", "jira", "files", "calendar")
    for verb in ("create", "read", "update", "delete", "list")
    for thing in ("issue", "message", "ticket", "file")
]
PATTERNS = ["create issue", "send slack message", "read file", "list tickets", "update event"]
PATH = "/v1/tool-discovery/search"
#: A rejected client waits this long before its next request (a proxy that failed open).
REJECTED_PAUSE = 0.05


def request_bytes(host: str, pattern: str) -> bytes:
    body = json.dumps({"pattern": pattern, "top_k": 5, "tools": TOOLS}).encode()
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def client(host: str, port: int, stop: float, out: list[tuple[int, float]], i: int) -> None:
    requests = [request_bytes(host, p) for p in PATTERNS]
    reader, writer = await asyncio.open_connection(host, port)
    n = 0
    try:
        while time.monotonic() < stop:
            started = time.perf_counter()
            writer.write(requests[(i + n) % len(requests)])
            n += 1
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            out.append((status, time.perf_counter() - started))
            if status == 503:
                await asyncio.sleep(REJECTED_PAUSE)
            if b"connection: close" in head.lower():
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
    except (OSError, asyncio.IncompleteReadError):
        out.append((0, 0.0))
    finally:
        writer.close()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def server_histogram(url: str) -> dict[float, float]:
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    buckets: Counter[float] = Counter()
    for le, count in re.findall(
        r'tool_selector_request_duration_seconds_bucket\{le="([^"]+)",outcome="[^"]+"\} (\S+)',
        text,
    ):
        buckets[float(le)] += float(count)
    return dict(buckets)


def histogram_quantile(before: dict[float, float], after: dict[float, float], q: float) -> str:
    delta = {le: after.get(le, 0) - before.get(le, 0) for le in sorted(after)}
    total = delta.get(float("inf"), 0)
    if not total:
        return "n/a"
    for le, cumulative in delta.items():
        if cumulative >= q * total:
            return f"<={le * 1000:g}ms"
    return "inf"


async def run(url: str, clients: int, seconds: float) -> dict[str, object]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    before = server_histogram(url)
    out: list[tuple[int, float]] = []
    stop = time.monotonic() + seconds
    await asyncio.gather(*(client(host, port, stop, out, i) for i in range(clients)))
    after = server_histogram(url)
    ok = [s for code, s in out if code == 200]
    every = [s for code, s in out if code]
    return {
        "clients": clients,
        "seconds": seconds,
        "statuses": dict(Counter(code for code, _ in out)),
        "ok_per_s": round(len(ok) / seconds, 1),
        "client_ok_ms": {"p50": pct(ok, 0.5), "p95": pct(ok, 0.95), "p99": pct(ok, 0.99)},
        "client_all_ms": {"p50": pct(every, 0.5), "p95": pct(every, 0.95), "max": pct(every, 1)},
        "server_200": {f"p{q}": histogram_quantile(before, after, q / 100) for q in (50, 95, 99)},
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
