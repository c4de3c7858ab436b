"""The caller's controls over HTTP on both contracts: filters, budget, min_score, context,
explain's counts, and a 400 naming the field for each kind of bad control."""

import re

import httpx
import msgspec
import pytest

from tests.support import ServiceProcess
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH


def mcp(name: str, description: str, **hints: bool) -> dict[str, object]:
    definition: dict[str, object] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}}},
    }
    if hints:
        definition["annotations"] = hints
    return {"name": name, "definition": definition}


TOOLS = [
    mcp("mcp__github__delete_repository", "Delete a GitHub repository", destructiveHint=True),
    mcp("mcp__github__get_repository", "Get a GitHub repository", readOnlyHint=True),
    mcp("mcp__github__create_repository", "Create a GitHub repository", destructiveHint=False),
    {"name": "run_shell", "description": "Run a shell command on the GitHub runner", "safe": False},
    mcp("mcp__slack__send_message", "Post a message to a Slack channel"),
]
PATHS = {"search": (SEARCH_PATH, "pattern"), "compress": (COMPRESS_PATH, "query")}


def post(service: ServiceProcess, contract: str, pattern: str, **fields: object) -> httpx.Response:
    path, pattern_field = PATHS[contract]
    return httpx.post(service.url + path, json={pattern_field: pattern, "tools": TOOLS, **fields})


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body["selected_names"] if "selected_names" in body else body["data"]["relevant_tools"]


def why(response: httpx.Response) -> dict:  # type: ignore[type-arg]
    body = response.json()
    return body if "selected_names" in body else body["data"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("contract", ["search", "compress"])
@pytest.mark.parametrize(
    ("filters", "absent"),
    [
        ({"deny": ["*delete*"]}, "mcp__github__delete_repository"),
        ({"exclude_destructive": True}, "mcp__github__delete_repository"),
        ({"read_only": True}, "mcp__github__create_repository"),
        ({}, "run_shell"),
    ],
    ids=["deny", "no-destructive", "read-only", "unsafe-by-default"],
)
def test_filters_never_leak(
    service: ServiceProcess, contract: str, filters: dict[str, object], absent: str
) -> None:
    got = names(post(service, contract, absent, filters=filters, always_keep=[absent]))
    assert absent not in got


@pytest.mark.parametrize("contract", ["search", "compress"])
def test_explain_counts_what_each_control_removed(service: ServiceProcess, contract: str) -> None:
    r = post(
        service,
        contract,
        "github repository",
        filters={"deny": ["*delete*"]},
        budget={"max_tools": 1},
        explain=True,
    )
    assert len(names(r)) == 1
    assert why(r)["removed"]["deny"] == 1
    assert why(r)["removed"]["unsafe"] == 1
    assert why(r)["removed"]["budget"] >= 1


@pytest.mark.parametrize("contract", ["search", "compress"])
def test_max_bytes_bounds_the_definitions_returned(service: ServiceProcess, contract: str) -> None:
    one = len(msgspec.json.encode(TOOLS[1]["definition"]))
    got = names(post(service, contract, "github repository", budget={"max_bytes": one + 10}))
    assert len(got) == 1


def test_min_score_is_a_calibrated_relevance(service: ServiceProcess) -> None:
    r = post(service, "search", "delete a github repository", explain=True, min_score=0.5)
    assert all(e["relevance"] >= 0.5 for e in why(r)["explanations"])
    assert names(r)[0] == "mcp__github__delete_repository"


def test_an_empty_answer_names_the_terms_nothing_holds(service: ServiceProcess) -> None:
    r = post(service, "search", "quantum chromodynamics", explain=True, min_score=1.0)
    assert names(r) == []
    assert "quantum" in why(r)["unmatched_terms"]


def test_a_follow_up_finds_the_conversations_tool(service: ServiceProcess) -> None:
    context = {
        "messages": ["Post 'deploy done' to #releases on Slack", "Posted to #releases."],
        "recent_tools": ["mcp__slack__send_message"],
    }
    got = names(post(service, "search", "and the same to #general", context=context))
    assert got[0] == "mcp__slack__send_message"


@pytest.mark.parametrize("contract", ["search", "compress"])
@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"filters": {"allow": ["x"], "colour": "red"}}, "colour"),
        ({"filters": {"deny": ["x" * 201]}}, "filters.deny"),
        ({"budget": {"max_bytes": -1}}, "budget.max_bytes"),
        ({"budget": {"max_tools": 0}}, "budget.max_tools"),
        ({"min_score": 1.5}, "min_score"),
        ({"min_score": "0.5"}, "min_score"),
        ({"context": {"messages": ["ok", 3]}}, "context.messages"),
        ({"context": {"recent_tools": "slack"}}, "context.recent_tools"),
    ],
    ids=[
        "unknown-key",
        "long-glob",
        "negative-bytes",
        "zero-tools",
        "score-range",
        "score-type",
        "message-type",
        "recent-type",
    ],
)
def test_bad_controls_are_a_400_naming_the_field(
    service: ServiceProcess, contract: str, fields: dict[str, object], named: str
) -> None:
    r = post(service, contract, "github", **fields)
    assert r.status_code == 400
    body = r.json()
    assert named in body["detail"]


@pytest.mark.parametrize("contract", ["search", "compress"])
def test_no_controls_answer_as_before(service: ServiceProcess, contract: str) -> None:
    plain = post(service, contract, "send a slack message")
    empty = post(service, contract, "send a slack message", context={"messages": []})
    # the compress answer's duration_ms is the one byte range a clock writes
    timed = re.compile(rb'"duration_ms":\d+')
    assert timed.sub(b"", plain.content) == timed.sub(b"", empty.content)
