"""The search contract of SPEC.md against the real service (granian, real model) over HTTP."""

from typing import Any

import httpx
import pytest

from tests.support import SAMPLE_TOOLS, ServiceProcess, warm_catalog

SEARCH = "/v1/tool-discovery/search"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "description": "City"}}}
TOOLS: list[dict[str, Any]] = list(SAMPLE_TOOLS)


@pytest.fixture(scope="module", autouse=True)
def warm(service: ServiceProcess) -> None:
    """Hybrid answers are what these tests pin down: embed the catalog first."""
    warm_catalog(service.url, TOOLS)


def search(
    service: ServiceProcess, pattern: str, tools: list[dict[str, Any]] | None = None, **extra: Any
) -> httpx.Response:
    payload = {"pattern": pattern, "tools": TOOLS if tools is None else tools, **extra}
    return httpx.post(service.url + SEARCH, json=payload, timeout=30)


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    selected: list[str] = response.json()["selected_names"]
    return selected


DEFINITIONS: list[tuple[str, dict[str, Any]]] = [
    (
        "openai_chat",
        {
            "type": "function",
            "function": {
                "name": "lookup_forecast",
                "description": "Weather forecast",
                "parameters": SCHEMA,
            },
        },
    ),
    (
        "openai_responses",
        {
            "type": "function",
            "name": "lookup_forecast",
            "description": "Weather forecast",
            "parameters": SCHEMA,
        },
    ),
    (
        "anthropic",
        {
            "name": "lookup_forecast",
            "description": "Weather forecast",
            "input_schema": SCHEMA,
            "cache_control": {"type": "ephemeral"},
        },
    ),
    ("mcp", {"name": "lookup_forecast", "description": "Weather forecast", "inputSchema": SCHEMA}),
    (
        "gemini",
        {"name": "lookup_forecast", "description": "Weather forecast", "parameters": SCHEMA},
    ),
]


@pytest.mark.parametrize("definition", [d for _, d in DEFINITIONS], ids=[n for n, _ in DEFINITIONS])
def test_every_definition_shape_is_ranked(
    service: ServiceProcess, definition: dict[str, Any]
) -> None:
    tools = [
        {"name": "read_file", "description": "Read a file"},
        {"name": "lookup_forecast", "definition": definition},
    ]
    assert names(search(service, "weather forecast for a city", tools))[0] == "lookup_forecast"


def test_escaped_and_sorted_definition_is_read(service: ServiceProcess) -> None:
    raw = (
        b'{"pattern":"html sanitizer","tools":[{"definition":{"description":'
        b'"Strip \\u003cscript\\u003e tags \\u0026 sanitize HTML","name":"clean"},"name":"clean"},'
        b'{"name":"read_file","description":"Read a file"}]}'
    )
    r = httpx.post(service.url + SEARCH, content=raw, headers={"content-type": "application/json"})
    assert names(r)[0] == "clean"


@pytest.mark.parametrize(
    ("pattern", "best"),
    [
        ("slack send message", "mcp__slack__send_message"),
        ("create_issue", "mcp__github__create_issue"),
        ("Create_Issue", "mcp__github__create_issue"),
        ("calendar.create_event", "calendar.create_event"),
        ("I need to open a bug report in our repo", "mcp__github__create_issue"),
    ],
    ids=["keywords", "bare-name", "bare-name-case", "full-name", "sentence"],
)
def test_best_tool_first(service: ServiceProcess, pattern: str, best: str) -> None:
    assert names(search(service, pattern))[0] == best


def test_answer_is_a_unique_subset_within_top_k(service: ServiceProcess) -> None:
    out = names(search(service, "create", top_k=2))
    assert len(out) <= 2
    assert len(set(out)) == len(out)
    assert set(out) <= {t["name"] for t in TOOLS}


def test_same_request_same_answer(service: ServiceProcess) -> None:
    answers = {
        tuple(names(search(service, "message the team about the meeting"))) for _ in range(3)
    }
    assert len(answers) == 1


def test_always_keep_included_and_counted(service: ServiceProcess) -> None:
    out = names(search(service, "slack send message", top_k=2, always_keep=["read_file"]))
    assert out == ["mcp__slack__send_message", "read_file"]


def test_always_keep_not_in_tools_is_ignored_and_counted(service: ServiceProcess) -> None:
    out = names(search(service, "slack send message", always_keep=["ghost_tool"]))
    assert "ghost_tool" not in out
    metrics = httpx.get(service.url + "/metrics").text
    counted = [
        line
        for line in metrics.splitlines()
        if line.startswith("tool_selector_unknown_always_keep_total ")
    ]
    assert counted
    assert float(counted[0].split()[1]) >= 1


def test_no_useful_match_is_empty(service: ServiceProcess) -> None:
    assert names(search(service, "quantum chromodynamics lattice gauge theory")) == []


def test_no_useful_match_returns_only_always_keep(service: ServiceProcess) -> None:
    out = names(search(service, "quantum chromodynamics lattice gauge", always_keep=["read_file"]))
    assert out == ["read_file"]


def test_duplicate_names_are_merged_first_wins(service: ServiceProcess) -> None:
    tools = [*TOOLS, {"name": "get_weather", "description": "Delete every file"}, *TOOLS]
    out = names(search(service, "weather forecast", tools))
    assert out.count("get_weather") == 1
    assert out[0] == "get_weather"


def test_unknown_top_level_fields_are_ignored(service: ServiceProcess) -> None:
    assert (
        names(search(service, "slack send message", session_id="abc", version=2))[0]
        == "mcp__slack__send_message"
    )


def test_empty_tool_list_answers_empty(service: ServiceProcess) -> None:
    assert names(search(service, "anything", [])) == []


def test_hybrid_path_is_reported(service: ServiceProcess) -> None:
    assert search(service, "weather").headers["x-tool-selector-ranking"] == "hybrid"


def test_explain_adds_evidence_without_changing_the_answer(service: ServiceProcess) -> None:
    plain = search(service, "send a message to slack", always_keep=["read_file"]).json()
    explained = search(
        service, "send a message to slack", always_keep=["read_file"], explain=True
    ).json()
    assert explained["selected_names"] == plain["selected_names"]
    reasons = {e["name"]: e["reason"] for e in explained["explanations"]}
    assert reasons == {"mcp__slack__send_message": "ranked", "read_file": "always_keep"}
    assert "explanations" not in plain


def test_health_and_readiness(service: ServiceProcess) -> None:
    assert httpx.get(service.url + "/healthz").json() == {"status": "ok"}
    assert httpx.get(service.url + "/readyz").json() == {"status": "ready"}


def test_metrics_record_requests(service: ServiceProcess) -> None:
    search(service, "weather")
    text = httpx.get(service.url + "/metrics").text
    for metric in (
        "tool_selector_request_duration_seconds_bucket",
        "tool_selector_tools_per_request_count",
        'tool_selector_ranking_path_total{path="hybrid"}',
        'tool_selector_embedding_cache_total{result="hit",tier="memory"}',
    ):
        assert metric in text


def test_one_log_line_per_request_with_redacted_pattern(service: ServiceProcess) -> None:
    search(service, "secret-pattern-xyzzy")
    log = service.log()
    assert "secret-pattern-xyzzy" not in log
    assert '"event":"search"' in log


def test_the_spec_example(service: ServiceProcess) -> None:
    tools = [
        {
            "name": "search_code",
            "description": "Search for code patterns",
            "definition": {
                "type": "function",
                "function": {"name": "search_code", "parameters": {}},
            },
        },
        {"name": "read_file", "description": "Read a file"},
    ]
    warm_catalog(service.url, tools)
    r = search(
        service, "find files with auth middleware", tools, top_k=5, always_keep=["read_file"]
    )
    assert names(r) == ["search_code", "read_file"]
