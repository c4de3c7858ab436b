"""Rollout modes, capture records and client metrics, against the real (lexical) service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.support import ServiceProcess, free_port
from tool_selector_client import CaptureWriter, ClientMetrics, Rollout, SelectorClient
from tool_selector_client.rollout import in_sample

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file"}},
    {"name": "slack_send_message", "description": "Send a message to a Slack channel"},
    {"name": "create_issue", "description": "Open a GitHub issue", "inputSchema": {}},
]
PATTERN = "send a slack message"


@pytest.fixture
def client(lexical_service: ServiceProcess) -> Iterator[SelectorClient]:
    with SelectorClient(lexical_service.url, timeout_s=5) as c:
        yield c


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_dark_mode_returns_tools_unchanged_and_records(
    client: SelectorClient, tmp_path: Path
) -> None:
    capture = CaptureWriter(tmp_path / "c.jsonl")
    decision = Rollout(client, "dark", capture=capture).search(PATTERN, TOOLS, session_id="s1")
    capture.close()
    [rec] = _records(tmp_path / "c.jsonl")
    assert (decision.tools, decision.applied) == (TOOLS, False)
    assert decision.selection is not None
    assert decision.selection.names[0] == "slack_send_message"
    assert {k: rec[k] for k in ("mode", "outcome", "selected", "applied", "relevance")} == {
        "mode": "dark",
        "outcome": "ok",
        "selected": list(decision.selection.names),
        "applied": False,
        "relevance": None,
    }


def test_shadow_mode_returns_current_and_records_relevance(
    client: SelectorClient, tmp_path: Path
) -> None:
    capture = CaptureWriter(tmp_path / "c.jsonl")
    current = TOOLS[:1]
    decision = Rollout(client, "shadow", capture=capture).search(PATTERN, TOOLS, current=current)
    capture.close()
    [rec] = _records(tmp_path / "c.jsonl")
    assert decision.tools == current
    assert decision.relevance == ("slack_send_message",)
    assert rec["relevance"] == ["slack_send_message"]


def test_enforce_mode_returns_our_picks_as_raw_definitions(client: SelectorClient) -> None:
    decision = Rollout(client, "enforce").search(PATTERN, TOOLS, top_k=1)
    assert (decision.tools, decision.applied) == ([TOOLS[1]], True)


def test_enforce_mode_fails_open_to_every_tool() -> None:
    with SelectorClient(f"http://127.0.0.1:{free_port()}", timeout_s=1) as dead:
        decision = Rollout(dead, "enforce").search(PATTERN, TOOLS)
    assert decision.selection is not None
    assert (decision.tools, decision.applied, decision.selection.reason) == (
        TOOLS,
        False,
        "connect_error",
    )


def test_off_mode_makes_no_call_and_no_record(client: SelectorClient, tmp_path: Path) -> None:
    capture = CaptureWriter(tmp_path / "c.jsonl")
    decision = Rollout(client, "off", capture=capture).search(PATTERN, TOOLS)
    assert (decision.tools, decision.sampled, decision.selection) == (TOOLS, False, None)
    assert not (tmp_path / "c.jsonl").exists()


def test_sampled_out_requests_behave_as_off(client: SelectorClient) -> None:
    decision = Rollout(client, "enforce", sample_percent=0).search(PATTERN, TOOLS)
    assert (decision.tools, decision.sampled) == (TOOLS, False)


def test_sampling_is_sticky_per_session() -> None:
    sessions = [f"session-{i}" for i in range(400)]
    first = [in_sample(25, s, rng=lambda: 0.0) for s in sessions]
    again = [in_sample(25, s, rng=lambda: 0.99) for s in sessions]
    assert first == again
    assert 60 < sum(first) < 140


@pytest.mark.parametrize(
    ("percent", "draw", "expected"),
    [(0, 0.0, False), (100, 0.999, True), (30, 0.29, True), (30, 0.31, False)],
    ids=["zero", "all", "below", "above"],
)
def test_sampling_without_session_draws(percent: float, draw: float, expected: bool) -> None:
    assert in_sample(percent, None, rng=lambda: draw) is expected


@pytest.mark.parametrize(
    ("redact", "detail", "pattern", "tools"),
    [
        (True, "names", None, ["read_file", "slack_send_message", "create_issue"]),
        (
            False,
            "descriptions",
            PATTERN,
            [
                {"name": "read_file", "description": "Read a file"},
                {"name": "slack_send_message", "description": "Send a message to a Slack channel"},
                {"name": "create_issue", "description": "Open a GitHub issue"},
            ],
        ),
        (False, "definitions", PATTERN, TOOLS),
    ],
    ids=["redacted_names", "descriptions", "definitions"],
)
def test_capture_record_fields(
    client: SelectorClient, tmp_path: Path, redact: bool, detail: Any, pattern: Any, tools: Any
) -> None:
    capture = CaptureWriter(tmp_path / "c.jsonl", redact_pattern=redact, tool_detail=detail)
    Rollout(client, "dark", capture=capture).search(PATTERN, TOOLS, session_id="abc")
    capture.close()
    [rec] = _records(tmp_path / "c.jsonl")
    assert (rec["pattern"], rec["tools"]) == (pattern, tools)
    assert rec["session"] != "abc"
    assert ("pattern_sha256" in rec) is redact
    assert rec["latency_ms"] > 0


def test_client_metrics_count_outcomes_latency_and_reinjected(client: SelectorClient) -> None:
    registry = CollectorRegistry()
    rollout = Rollout(client, "shadow", metrics=ClientMetrics(registry))
    rollout.search(PATTERN, TOOLS)
    rollout.search("   ", TOOLS)
    value = registry.get_sample_value
    assert value("tool_selector_client_outcomes_total", {"mode": "shadow", "outcome": "ok"}) == 1
    assert (
        value("tool_selector_client_outcomes_total", {"mode": "shadow", "outcome": "empty_pattern"})
        == 1
    )
    assert value("tool_selector_client_request_duration_seconds_count", {"outcome": "ok"}) == 1
    assert value("tool_selector_client_tools_reinjected_sum", {"mode": "shadow"}) == 6
    assert value("tool_selector_client_shadow_top1_total", {"result": "agree"}) == 1


def test_capture_write_errors_are_counted_not_raised(
    client: SelectorClient, tmp_path: Path
) -> None:
    capture = CaptureWriter(tmp_path)  # a directory: every write fails
    decision = Rollout(client, "dark", capture=capture).search(PATTERN, TOOLS)
    assert (decision.tools, capture.errors) == (TOOLS, 1)
