"""Chaos: under steady load, the shared Redis tier is hung (SIGSTOP), then killed, then
restarted empty. Every request must still succeed within the proxy's budget; the breaker must
open and close again; Redis hits must come back once the tier is refilled.

The service runs with no in-process tiers (memory cache and catalog reuse off), so every
request goes to Redis and its faults are on the request path."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import RedisProcess, ServiceProcess, start_redis, start_service

BUDGET_S = 0.150
RATE = 25  # requests per second, steady
CATALOGS = [
    [
        {"name": f"c{c}_tool_{i}", "description": f"{word} tool number {i} for catalog {c}"}
        for i, word in enumerate(["send", "read", "write", "search", "delete", "list"] * 3)
    ]
    for c in range(3)
]


@pytest.fixture(scope="module")
def chaos(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServiceProcess, RedisProcess, Path]]:
    tmp = tmp_path_factory.mktemp("chaos")
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
    )
    yield service, redis, tmp
    service.stop()
    redis.stop()


class Load:
    """Steady open-loop-ish load from one thread: one request every 1/RATE s, recorded."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.results: list[tuple[float, int, float, str]] = []  # (t, status, seconds, path)
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

    def paced(self) -> float:
        """Requests sent per second of load, as a share of ``RATE``."""
        return len(self.results) / (self.seconds * RATE)

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
                self._stop.wait(max(0.0, 1 / RATE - took))

    def since(self, t: float) -> list[tuple[float, int, float, str]]:
        return [r for r in self.results if r[0] >= t]


def metric(url: str, name: str) -> float:
    text = httpx.get(url + "/metrics").text
    found = re.search("^" + re.escape(name) + r" ([0-9.e+-]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def p99(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.99 * len(xs)))]


def test_redis_hung_killed_and_restarted_under_load(
    chaos: tuple[ServiceProcess, RedisProcess, Path],
) -> None:
    service, redis, tmp = chaos
    url = service.url
    hits = 'tool_selector_embedding_cache_total{result="hit",tier="redis"}'
    opened = 'tool_selector_redis_breaker_transitions_total{state="open"}'
    closed = 'tool_selector_redis_breaker_transitions_total{state="closed"}'
    with Load(url) as load:
        time.sleep(2)
        healthy_paths = {r[3] for r in load.results}
        os.kill(redis.proc.pid, signal.SIGSTOP)
        time.sleep(3)
        open_while_hung = metric(url, "tool_selector_redis_breaker_open")
        redis.proc.kill()  # SIGKILL works on a stopped process
        redis.proc.wait(5)
        time.sleep(2)
        restarted = start_redis(tmp, port=redis.port)
        back = time.monotonic()
        deadline = back + 20
        while time.monotonic() < deadline and not (
            metric(url, "tool_selector_redis_breaker_open") == 0
            and {r[3] for r in load.since(time.monotonic() - 1)} == {"hybrid"}
        ):
            time.sleep(0.25)
        hits_before = metric(url, hits)
        time.sleep(1)
        hits_after = metric(url, hits)
        open_at_end = metric(url, "tool_selector_redis_breaker_open")
        transitions = (metric(url, opened) >= 1, metric(url, closed) >= 1)
    restarted.stop()
    statuses = [r[1] for r in load.results]
    latencies = [r[2] for r in load.results]
    print(  # noqa: T201 - shown with -s or on failure: the numbers for the report
        f"chaos: {len(statuses)} requests, {len(statuses) - statuses.count(200)} failed, "
        f"p99 {p99(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms, "
        f"breaker open while hung {open_while_hung}, redis hits in last second "
        f"{hits_after - hits_before:.0f}, {load.seconds:.1f} s at {load.paced():.0%} of the pace"
    )
    assert healthy_paths == {"hybrid"}
    assert statuses.count(200) == len(statuses)
    assert load.seconds >= 8
    assert load.paced() >= 0.9
    assert p99(latencies) <= BUDGET_S
    assert open_while_hung == 1
    assert transitions == (True, True)
    assert open_at_end == 0
    assert hits_after > hits_before  # served from the refilled Redis again
