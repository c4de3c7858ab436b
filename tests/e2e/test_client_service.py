"""The client against the real service (bundled model)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support import ServiceProcess
from tool_selector_client import AsyncSelectorClient, Selection, SelectorClient

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file"}},
    {"name": "mcp__slack__send_message", "description": "Post to a Slack channel"},
    {"name": "mcp__slack__send_message", "description": "duplicate, second copy"},
    {"functionDeclarations": [{"name": "get_weather", "description": "Weather forecast"}]},
]


def test_sync_client_gets_raw_definitions_back(service: ServiceProcess) -> None:
    with SelectorClient(service.url, timeout_s=5, max_search_results=1) as client:
        selection = client.select("slack send message", TOOLS)
    assert (selection.reason, selection.names, selection.tools) == (
        None,
        ("mcp__slack__send_message",),
        [TOOLS[1]],
    )


def test_async_client_gets_raw_definitions_back(service: ServiceProcess) -> None:
    async def go() -> Selection:
        async with AsyncSelectorClient(service.url, timeout_s=5) as client:
            return await client.select("weather forecast", TOOLS, top_k=1)

    selection = asyncio.run(go())
    assert (selection.ok, selection.tools) == (
        True,
        [{"name": "get_weather", "description": "Weather forecast"}],
    )
