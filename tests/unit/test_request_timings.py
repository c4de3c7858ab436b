"""What the search metrics time, in process, on a fake clock (no test asserts a pace)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, TypeVar

import pytest
from litestar.testing import TestClient
from prometheus_client import CollectorRegistry

from tool_selector.http import handlers
from tool_selector.http.app import create_app
from tool_selector.http.workers import WorkerPool
from tool_selector.settings import Settings
from tool_selector_client.wire import SEARCH_PATH

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
