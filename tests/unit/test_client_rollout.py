"""Rollout.search never raises, whatever the caller passes (no service needed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import free_port
from tool_selector_client import (
    AsyncRollout,
    AsyncSelectorClient,
    CaptureWriter,
    Decision,
    Rollout,
    SelectorClient,
)

TOOLS: list[dict[str, Any]] = [{"name": "read_file", "description": "Read a file"}]


def _sync(mode: Any, **kw: Any) -> Decision:
    with SelectorClient(f"http://127.0.0.1:{free_port()}", timeout_s=1) as client:
        return Rollout(client, mode).search("read a file", **kw)


def _async(mode: Any, **kw: Any) -> Decision:
    async def go() -> Decision:
        async with AsyncSelectorClient(f"http://127.0.0.1:{free_port()}", timeout_s=1) as client:
            return await AsyncRollout(client, mode).search("read a file", **kw)

    return asyncio.run(go())


@pytest.mark.parametrize("run", [_sync, _async], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("kw", "returned"),
    [
        ({"tools": TOOLS, "always_keep": None}, TOOLS),
        ({"tools": None}, []),
        ({"tools": TOOLS, "current": 42}, []),
    ],
    ids=["always_keep_none", "tools_none", "current_not_iterable"],
)
def test_bad_arguments_never_raise(run: Any, kw: dict[str, Any], returned: list[Any]) -> None:
    assert run("dark", **kw).tools == returned


def test_shadow_relevance_counts_a_repeated_tool_once() -> None:
    tools = [
        {"name": "slack_send", "description": "Send a Slack message"},
        {"name": "slack_send", "description": "Send a Slack message (second copy)"},
        {"name": "read_file", "description": "Read a file"},
    ]
    with SelectorClient(f"http://127.0.0.1:{free_port()}", timeout_s=1) as client:
        decision = Rollout(client, "shadow").search("send a slack message", tools)
    assert decision.relevance == ("slack_send",)


@pytest.mark.parametrize(
    ("top_k", "used"), [(0, 1), (-3, 1), (2, 2), (50, 5)], ids=["zero", "negative", "two", "above"]
)
def test_shadow_uses_the_top_k_the_client_sends(tmp_path: Path, top_k: int, used: int) -> None:
    tools = [{"name": f"slack_{i}", "description": "Send a Slack message"} for i in range(8)]
    capture = CaptureWriter(tmp_path / "c.jsonl")
    with SelectorClient(f"http://127.0.0.1:{free_port()}", timeout_s=1) as client:
        decision = Rollout(client, "shadow", capture=capture).search("slack", tools, top_k=top_k)
    capture.close()
    record = json.loads((tmp_path / "c.jsonl").read_text())
    assert (len(decision.relevance or ()), record["top_k"]) == (used, used)
