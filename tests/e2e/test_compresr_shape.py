"""Compresr's own answer shape on the compress contract (``data.tool_count``,
``data.original_tool_count``, ``data.duration_ms``) and ``GET /health``, over real HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support import SAMPLE_TOOLS, ServiceProcess
from tool_selector import __version__
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH


def compress(service: ServiceProcess, body: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(service.url + COMPRESS_PATH, json=body, timeout=30)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()["data"]
    return data


@pytest.mark.parametrize(
    ("tools", "max_tools", "sent"),
    [
        (SAMPLE_TOOLS, 2, 5),
        ([*SAMPLE_TOOLS, *SAMPLE_TOOLS], 3, 5),
        (SAMPLE_TOOLS[:1], 5, 1),
    ],
    ids=["five-tools", "every-tool-twice", "one-tool"],
)
def test_the_counts_are_names_returned_and_tools_sent(
    lexical_service: ServiceProcess, tools: list[dict[str, str]], max_tools: int, sent: int
) -> None:
    body = {"query": "read a file from the disk", "max_tools": max_tools, "tools": tools}
    data = compress(lexical_service, body)
    counts = (data["tool_count"], data["original_tool_count"])
    assert counts == (len(data["relevant_tools"]), sent)
    assert data["relevant_tools"]


def test_duration_is_whole_milliseconds(lexical_service: ServiceProcess) -> None:
    data = compress(lexical_service, {"query": "slack", "tools": SAMPLE_TOOLS})
    assert isinstance(data["duration_ms"], int)
    assert data["duration_ms"] >= 0


def test_an_empty_answer_still_counts(lexical_service: ServiceProcess) -> None:
    data = compress(lexical_service, {"query": "zzqx vvkw", "tools": SAMPLE_TOOLS})
    assert (data["relevant_tools"], data["tool_count"], data["original_tool_count"]) == ([], 0, 5)


def test_explain_keeps_the_counts(lexical_service: ServiceProcess) -> None:
    data = compress(lexical_service, {"query": "slack", "tools": SAMPLE_TOOLS, "explain": True})
    assert {"tool_count", "original_tool_count", "duration_ms", "explanations"} <= data.keys()


def test_the_first_contract_answers_as_before(lexical_service: ServiceProcess) -> None:
    body = {"pattern": "slack", "tools": SAMPLE_TOOLS}
    for path in (SEARCH_PATH, COMPRESS_PATH):  # v0.5.2 posts this body to the compress path
        r = httpx.post(lexical_service.url + path, json=body, timeout=30)
        assert list(r.json()) == ["selected_names"]


def test_health_answers_status_and_version(lexical_service: ServiceProcess) -> None:
    r = httpx.get(lexical_service.url + "/health")
    assert (r.status_code, r.headers["content-type"]) == (200, "application/json")
    assert r.json() == {"status": "ok", "version": __version__}
