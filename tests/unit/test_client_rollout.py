"""Rollout.search never raises, whatever the caller passes (no service needed)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support import free_port
from tool_selector_client import (
    AsyncRollout,
    AsyncSelectorClient,
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
