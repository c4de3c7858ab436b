"""Explain mode on the running service: evidence per returned tool, answer unchanged."""

import httpx
import pytest

from tests.support import ServiceProcess

TOOLS = [
    {"name": "read_file", "description": "Read a file from disk"},
    {"name": "mcp__slack__send_message", "description": "Post a message to a Slack channel"},
    {"name": "get_weather", "description": "Current weather forecast for a city"},
]


def search(service: ServiceProcess, **body: object) -> dict:  # type: ignore[type-arg]
    r = httpx.post(service.url + "/v1/tool-discovery/search", json={"tools": TOOLS, **body})
    assert r.status_code == 200
    return r.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "pattern",
    ["send a slack message", "weather in Paris", "quantum chromodynamics lattice"],
    ids=["match", "other-match", "no-match"],
)
def test_explain_leaves_selected_names_unchanged(service: ServiceProcess, pattern: str) -> None:
    plain = search(service, pattern=pattern, always_keep=["read_file"])
    explained = search(service, pattern=pattern, always_keep=["read_file"], explain=True)
    assert explained["selected_names"] == plain["selected_names"]
    assert "explanations" not in plain


def test_explanations_follow_the_answer(service: ServiceProcess) -> None:
    body = search(service, pattern="send a slack message", always_keep=["read_file"], explain=True)
    assert [e["name"] for e in body["explanations"]] == body["selected_names"]


def test_a_ranked_tool_carries_its_evidence(service: ServiceProcess) -> None:
    top = search(service, pattern="send a slack message", explain=True)["explanations"][0]
    assert top["name"] == "mcp__slack__send_message"
    assert top["reason"] == "ranked"
    assert top["bm25_rank"] == 1
    assert top["dense_rank"] == 1
    assert top["bm25_score"] > 0
    assert 0 < top["dense_similarity"] <= 1
    assert set(top["matched_terms"]) == {"send", "slack", "message"}
    assert isinstance(top["score"], float)


@pytest.mark.parametrize(
    ("pattern", "always_keep", "name", "reason"),
    [
        ("get_weather", [], "get_weather", "exact_name"),
        ("quantum chromodynamics lattice", ["read_file"], "read_file", "always_keep"),
    ],
    ids=["exact-name", "always-keep"],
)
def test_explanation_reason(
    service: ServiceProcess, pattern: str, always_keep: list[str], name: str, reason: str
) -> None:
    body = search(service, pattern=pattern, always_keep=always_keep, explain=True)
    assert {e["name"]: e["reason"] for e in body["explanations"]}[name] == reason
