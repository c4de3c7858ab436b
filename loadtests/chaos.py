"""Redis chaos under steady load, with the figures a test must not assert:

    PYTHONPATH=service:. python -m loadtests.chaos [--runs 3] [--rate 25]

A service on loopback with no in-process tiers (memory cache and catalog reuse off, so every
request reads the shared tier) gets one request every ``1/rate`` s from one thread while its
Redis is hung (SIGSTOP), then killed, then restarted empty. Each run prints the requests
sent and failed, how many fell in each phase, p50/p99/max latency, the share of the pace
the load kept, whether the breaker opened and closed, and the Redis hits once the tier was
refilled. ``tests/perf/test_redis_chaos.py`` runs the same scenario and asserts only what
must hold on any machine: nothing lost, the breaker opened and closed, Redis hits resumed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tests.support import RedisProcess, start_redis, start_service

RATE = 25  # requests per second, steady
CATALOGS = [
    [
        {"name": f"c{c}_tool_{i}", "description": f"{word} tool number {i} for catalog {c}"}
        for i, word in enumerate(["send", "read", "write", "search", "delete", "list"] * 3)
    ]
    for c in range(3)
]
HITS = 'tool_selector_embedding_cache_total{result="hit",tier="redis"}'
OPENED = 'tool_selector_redis_breaker_transitions_total{state="open"}'
CLOSED = 'tool_selector_redis_breaker_transitions_total{state="closed"}'
OPEN = "tool_selector_redis_breaker_open"
#: A result: (sent at, HTTP status or 0 for a client error, seconds, ranking path).
Result = tuple[float, int, float, str]


class Load:
    """Steady load from one thread: one request every ``1/rate`` s, each recorded."""

    def __init__(self, url: str, rate: int = RATE) -> None:
        self.url = url
        self.rate = rate
        self.results: list[Result] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.began = self.seconds = 0.0

    def __enter__(self) -> Load:
        self.began = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self.seconds = time.monotonic() - self.began

    def since(self, t: float, until: float = float("inf")) -> list[Result]:
        """The results of requests sent from ``t`` until ``until``."""
        return [r for r in self.results if t <= r[0] < until]

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            i = 0
            while not self._stop.is_set():
                started = time.monotonic()
                body = {"pattern": f"search catalog {i % 7}", "tools": CATALOGS[i % len(CATALOGS)]}
                try:
                    r = client.post(self.url + "/v1/tool-discovery/search", json=body)
                    status, path = r.status_code, r.headers.get("x-tool-selector-ranking", "")
                except httpx.HTTPError:
                    status, path = 0, ""
                took = time.monotonic() - started
                self.results.append((started, status, took, path))
                i += 1
                self._stop.wait(max(0.0, 1 / self.rate - took))


@dataclass
class ChaosRun:
    """What one run saw. ``phases`` holds each phase's results (healthy, hung, dead,
    restarted); the breaker and hit figures are read from the service's ``/metrics``."""

    results: list[Result]
    seconds: float
    rate: int
    phases: dict[str, list[Result]] = field(default_factory=dict)
    open_while_hung: float = 0.0
    opened: float = 0.0
    closed: float = 0.0
    open_at_end: float = 0.0
    hits_before: float = 0.0
    hits_after: float = 0.0

    @property
    def failed(self) -> int:
        return sum(r[1] != 200 for r in self.results)

    def paced(self) -> float:
        """Requests sent per second of load, as a share of the rate asked for."""
        return len(self.results) / (self.seconds * self.rate)

    def latency(self, q: float) -> float:
        """The ``q`` quantile of the request latencies, in seconds."""
        xs = sorted(r[2] for r in self.results)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    def summary(self) -> str:
        counts = ", ".join(f"{k} {len(v)}" for k, v in self.phases.items())
        return (
            f"{len(self.results)} requests ({counts}), {self.failed} failed, "
            f"p50 {self.latency(0.5) * 1000:.1f} ms, p99 {self.latency(0.99) * 1000:.1f} ms, "
            f"max {self.latency(1.0) * 1000:.1f} ms, {self.seconds:.1f} s at "
            f"{self.paced():.0%} of {self.rate}/s; breaker open while hung "
            f"{self.open_while_hung:.0f}, opened {self.opened:.0f} closed {self.closed:.0f} "
            f"times, open at end {self.open_at_end:.0f}; redis hits in the last second "
            f"{self.hits_after - self.hits_before:.0f}"
        )


def metric(url: str, name: str) -> float:
    text = httpx.get(url + "/metrics").text
    found = re.search("^" + re.escape(name) + r" ([0-9.e+-]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def run(tmp: Path, rate: int = RATE) -> ChaosRun:
    """One chaos run in ``tmp``: its own redis-server and service, stopped at the end."""
    redis = start_redis(tmp)
    warmup = tmp / "warmup.jsonl"
    warmup.write_text("\n".join(json.dumps({"tools": c}) for c in CATALOGS))
    service = start_service(
        tmp,
        {
            "TOOL_SELECTOR_ENCODER": "onnx-int8",
            "TOOL_SELECTOR_REDIS_URL": redis.url,
            "TOOL_SELECTOR_REDIS_TIMEOUT_MS": "30",
            "TOOL_SELECTOR_REDIS_BREAKER_RESET_MS": "300",
            "TOOL_SELECTOR_EMBED_CACHE_BYTES": "0",
            "TOOL_SELECTOR_CATALOG_CACHE_TOOLS": "0",
            "TOOL_SELECTOR_WARMUP_FILE": str(warmup),
        },
        deadline=None,  # the deployed 2 s: "no request lost" means answered within it
    )
    try:
        return _under_load(service.url, redis, tmp, rate)
    finally:
        service.stop()
        redis.stop()


def _under_load(url: str, redis: RedisProcess, tmp: Path, rate: int) -> ChaosRun:
    marks: dict[str, float] = {}
    with Load(url, rate) as load:
        marks["healthy"] = load.began
        time.sleep(2)
        marks["hung"] = time.monotonic()
        os.kill(redis.proc.pid, signal.SIGSTOP)
        time.sleep(3)
        open_while_hung = metric(url, OPEN)
        marks["dead"] = time.monotonic()
        redis.proc.kill()  # SIGKILL works on a stopped process
        redis.proc.wait(5)
        time.sleep(2)
        restarted = start_redis(tmp, port=redis.port)
        marks["restarted"] = time.monotonic()
        deadline = marks["restarted"] + 20
        while time.monotonic() < deadline and not (
            metric(url, OPEN) == 0
            and {r[3] for r in load.since(time.monotonic() - 1)} == {"hybrid"}
        ):
            time.sleep(0.25)
        hits_before = metric(url, HITS)
        time.sleep(1)
        hits_after = metric(url, HITS)
        chaos = ChaosRun(
            results=load.results,
            seconds=0.0,
            rate=rate,
            open_while_hung=open_while_hung,
            opened=metric(url, OPENED),
            closed=metric(url, CLOSED),
            open_at_end=metric(url, OPEN),
            hits_before=hits_before,
            hits_after=hits_after,
        )
    restarted.stop()
    chaos.seconds = load.seconds
    ends = [*list(marks.values())[1:], float("inf")]
    chaos.phases = {
        name: load.since(t, end) for (name, t), end in zip(marks.items(), ends, strict=True)
    }
    return chaos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rate", type=int, default=RATE)
    args = parser.parse_args()
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
            print(f"run {i + 1}: {run(Path(tmp), args.rate).summary()}", flush=True)


if __name__ == "__main__":
    main()
