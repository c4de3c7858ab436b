"""Text is text: a lone UTF-16 surrogate escape (a string cut mid-emoji, as ``JSON.stringify``
writes it) reads as U+FFFD in every string field of both contracts, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support import ServiceProcess
from tool_selector_client.catalog_lint import LINT_PATH
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH

CUT = "\ud83d"  # half of 😀: json.dumps writes it as the escape \ud83d, as JSON.stringify does
TOOLS: list[dict[str, Any]] = [
    {"name": "send_message", "description": "Post a message to a Slack channel"},
    {"name": "read_file", "description": "Read a file from the local disk"},
]

Edit = Callable[[dict[str, Any]], None]


def _name(body: dict[str, Any]) -> None:
    body["tools"].append({"name": f"slack_{CUT}", "description": "Slack message"})


def _description(body: dict[str, Any]) -> None:
    body["tools"][0]["description"] += f" {CUT}"


def _definition(body: dict[str, Any]) -> None:
    schema = {"properties": {"text": {"type": "string", "description": f"the text {CUT}"}}}
    body["tools"][0]["definition"] = {
        "type": "function",
        "function": {"name": "send_message", "description": f"Post {CUT}", "parameters": schema},
    }


def _context(body: dict[str, Any]) -> None:
    body["context"] = {"messages": [f"we talked about Slack {CUT}"], "recent_tools": [CUT]}


def _always_keep(body: dict[str, Any]) -> None:
    body["always_keep"] = [f"read_{CUT}"]
    body["tools"].append({"name": f"read_{CUT}", "description": "keep me"})


FIELDS: dict[str, tuple[Edit, str]] = {
    "pattern": (lambda b: b.update(pattern=f"send a slack message {CUT}"), "send_message"),
    "tool_name": (_name, "slack_\ufffd"),
    "description": (_description, "send_message"),
    "definition": (_definition, "send_message"),
    "context": (_context, "send_message"),
    "always_keep": (_always_keep, "read_\ufffd"),
}


def post(service: ServiceProcess, path: str, body: dict[str, Any]) -> httpx.Response:
    sent = json.dumps(body)  # ensure_ascii: the lone surrogate goes out as \ud83d
    assert "\\ud83d" in sent
    if path != SEARCH_PATH:
        sent = sent.replace('"pattern":', '"query":').replace('"top_k":', '"max_tools":')
    headers = {"content-type": "application/json"}
    return httpx.post(service.url + path, content=sent.encode(), headers=headers, timeout=30)


def picked(path: str, answer: dict[str, Any]) -> list[str]:
    names: list[str] = (
        answer["selected_names"] if path == SEARCH_PATH else answer["data"]["relevant_tools"]
    )
    return names


@pytest.mark.parametrize("path", [SEARCH_PATH, COMPRESS_PATH], ids=["search", "compress"])
@pytest.mark.parametrize("field", list(FIELDS))
def test_a_lone_surrogate_reads_as_the_replacement_character(
    lexical_service: ServiceProcess, path: str, field: str
) -> None:
    edit, expected = FIELDS[field]
    tools = [dict(t) for t in TOOLS]
    body: dict[str, Any] = {"pattern": "send a slack message", "top_k": 3, "tools": tools}
    edit(body)
    r = post(lexical_service, path, body)
    assert r.status_code == 200, r.text
    assert expected in picked(path, r.json())


def test_the_compress_contracts_parameters_are_text_too(lexical_service: ServiceProcess) -> None:
    tool = {"name": "send_message", "parameters": {"properties": {"t": {"description": CUT}}}}
    body = {"query": "slack message", "max_tools": 2, "tools": [tool]}
    r = post(lexical_service, COMPRESS_PATH, body)
    assert (r.status_code, r.json()["data"]["relevant_tools"]) == (200, ["send_message"])


def test_the_catalog_report_reads_the_same_text(lexical_service: ServiceProcess) -> None:
    tools = [*TOOLS, {"name": f"slack_{CUT}", "description": f"Slack {CUT}"}]
    r = post(lexical_service, LINT_PATH, {"tools": tools})
    assert (r.status_code, r.json()["tools"]) == (200, 3), r.text
