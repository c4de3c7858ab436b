"""What the search metrics time, in process, on a fake clock (no test asserts a pace)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, TypeVar

import anyio
import pytest
from litestar.testing import TestClient
from prometheus_client import CollectorRegistry

from tool_selector.http import handlers
from tool_selector.http.app import create_app
from tool_selector.http.auth import KeyRing
from tool_selector.http.guard import Guard, GuardState
from tool_selector.http.workers import WorkerPool
from tool_selector.settings import Settings
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH

A = TypeVar("A")
T = TypeVar("T")
#: Fake seconds a search waits for a worker thread.
WAIT = 100.0
BODY = {"pattern": "send a slack message", "tools": [{"name": "slack_send"}]}


class Clock:
    """``time.perf_counter`` that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class BusyPool(WorkerPool):
    """Every run waits ``WAIT`` seconds of ``clock`` for a thread before it starts."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(1)
        self.clock = clock

    async def run(self, fn: Callable[[A], T], arg: A) -> T:
        self.clock.now += WAIT
        return await super().run(fn, arg)


def stage_sums(monkeypatch: pytest.MonkeyPatch) -> dict[str, float | None]:
    """One search behind a busy worker; the seconds it recorded under queue and decode."""
    clock, registry = Clock(), CollectorRegistry()
    monkeypatch.setattr(handlers, "time", SimpleNamespace(perf_counter=clock))
    app = create_app(Settings(encoder="none"), registry=registry)
    app.state.runtime.workers = BusyPool(clock)
    client: TestClient[Any]
    with TestClient(app) as client:
        assert client.post(SEARCH_PATH, json=BODY).status_code == 200
    family = "tool_selector_stage_duration_seconds_sum"
    return {s: registry.get_sample_value(family, {"stage": s}) for s in ("queue", "decode")}


def test_the_wait_for_a_worker_is_the_queue_stage_not_decode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert stage_sums(monkeypatch) == {"queue": WAIT, "decode": 0.0}


KEY = "timings-key-0123456789"
ERRORS = "tool_selector_request_duration_seconds_count"


def error_counts(registry: CollectorRegistry) -> dict[str, float | None]:
    return {
        c: registry.get_sample_value(ERRORS, {"outcome": "error", "contract": c})
        for c in ("search", "compress", "unknown")
    }


@pytest.mark.parametrize(
    ("path", "kw"),
    [
        (COMPRESS_PATH, {"json": {"query": "slack", "tools": []}}),
        (COMPRESS_PATH, {"json": {"query": "slack", "max_tools": 99, "tools": []}, "auth": True}),
        (COMPRESS_PATH, {"content": b"{", "auth": True}),
        (COMPRESS_PATH, {"content": b"{" * 3000, "auth": True}),
    ],
    ids=["unauthorized", "decoded-then-refused", "malformed", "too-large"],
)
def test_every_refused_search_is_timed_under_its_paths_contract(
    path: str, kw: dict[str, Any]
) -> None:
    registry = CollectorRegistry()
    settings = Settings(encoder="none", api_keys=KEY, max_body_bytes=2000, max_top_k=50)
    headers = {"content-type": "application/json"}
    if kw.pop("auth", False):
        headers["X-API-Key"] = KEY
    client: TestClient[Any]
    with TestClient(create_app(settings, registry=registry)) as client:
        assert client.post(path, headers=headers, **kw).status_code >= 400
    assert error_counts(registry) == {"search": None, "compress": 1.0, "unknown": None}


async def hang(scope: Any, receive: Any, send: Any) -> None:
    await anyio.sleep_forever()


def test_a_search_past_its_deadline_is_timed_though_its_handler_was_cancelled() -> None:
    registry = CollectorRegistry()
    settings = Settings(encoder="none", request_deadline_seconds=0.01)
    guard = Guard(
        hang, create_app(settings, registry=registry).state.runtime, KeyRing(), GuardState()
    )
    scope = {"type": "http", "method": "POST", "path": SEARCH_PATH, "headers": []}
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    anyio.run(guard, scope, receive, send)  # type: ignore[arg-type]
    assert (statuses, error_counts(registry)["search"]) == ([503], 1.0)
