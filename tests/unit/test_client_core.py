"""The proxy's validation rules applied to the service's answer (sans-I/O core)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tool_selector_client import policy
from tool_selector_client.core import (
    Controls,
    Prepared,
    Selection,
    interpret,
    permitted,
    prepare,
)
from tool_selector_client.wire import Budget, Filters

TOOLS = [{"name": n, "description": n} for n in ("a", "b", "c")]


def _prepared(top_k: int = 5) -> Prepared:
    prepared = prepare("find", TOOLS, top_k, ["keep_absent"])
    assert isinstance(prepared, Prepared)
    return prepared


def _answer(names: list[str], top_k: int = 5) -> Selection:
    return interpret(_prepared(top_k), 200, json.dumps({"selected_names": names}).encode(), 0.01)


@pytest.mark.parametrize(
    ("answer", "top_k", "names"),
    [
        (["c", "a"], 5, ("c", "a")),
        (["zz", "b", "b", "a"], 5, ("b", "a")),
        (["a", "b", "c"], 2, ("a", "b")),
    ],
    ids=["rank_order_kept", "unknown_and_repeats_dropped", "capped_at_top_k"],
)
def test_meaningful_answers(answer: list[str], top_k: int, names: tuple[str, ...]) -> None:
    selection = _answer(answer, top_k)
    assert (selection.ok, selection.names) == (True, names)
    assert [t["name"] for t in selection.tools] == list(names)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [([], "empty_selection"), (["x", "y"], "unknown_names")],
    ids=["empty", "all_unknown"],
)
def test_non_meaningful_answers_fail_open(answer: list[str], reason: str) -> None:
    selection = _answer(answer)
    assert (selection.reason, selection.tools) == (reason, TOOLS)


@pytest.mark.parametrize(
    "body",
    [b"[1, 2]", b'{"selected_names": "a"}', b"\xff\xfe", b""],
    ids=["array", "wrong_type", "not_utf8", "empty"],
)
def test_malformed_answers_are_bad_responses(body: bytes) -> None:
    assert interpret(_prepared(), 200, body, 0.0).reason == "bad_response"


def test_request_body_carries_top_k_and_always_keep() -> None:
    body = json.loads(_prepared(top_k=2).body)
    assert (body["top_k"], body["always_keep"], len(body["tools"])) == (2, ["keep_absent"], 3)


def test_no_named_tool_means_nothing_to_ask() -> None:
    selection = prepare("find", [{"description": "nameless"}], 5, [])
    assert isinstance(selection, Selection)
    assert selection.reason == "empty_selection"


RAW = [
    {"name": "delete_repo", "description": "Delete a repository"},
    {"name": "get_repo", "description": "Get a repository", "annotations": {"readOnlyHint": True}},
    {"name": "run_shell", "description": "Run a command", "safe": False},
]


@pytest.mark.parametrize(
    ("filters", "left"),
    [
        (None, ["delete_repo", "get_repo", "run_shell"]),
        (Filters(deny=["delete_*"]), ["get_repo"]),
        (Filters(read_only=True), ["get_repo"]),
        (Filters(allow_unsafe=True), ["delete_repo", "get_repo", "run_shell"]),
    ],
    ids=["none", "deny", "read-only", "unsafe-allowed"],
)
def test_fail_open_keeps_only_permitted_tools(filters: Filters | None, left: list[str]) -> None:
    assert [t["name"] for t in permitted(RAW, filters)] == left


def test_min_score_makes_an_empty_answer_an_answer() -> None:
    prepared = prepare("x", RAW, 5, (), Controls(min_score=0.9))
    assert isinstance(prepared, Prepared)
    selection = interpret(prepared, 200, b'{"selected_names": []}', 0.01)
    assert selection.ok
    assert selection.tools == []


def test_controls_travel_in_the_body() -> None:
    prepared = prepare("x", RAW, 5, (), Controls(budget=Budget(max_tools=2)))
    assert isinstance(prepared, Prepared)
    assert b'"budget":{"max_tools":2}' in prepared.body


def _kept(names: list[str], top_k: int = 5, controls: Controls | None = None) -> Selection:
    prepared = prepare("find", TOOLS, top_k, ["a"], controls or Controls())
    assert isinstance(prepared, Prepared)
    return interpret(prepared, 200, json.dumps({"selected_names": names}).encode(), 0.01)


def test_only_always_keep_names_is_no_useful_match() -> None:
    """SPEC rule 4: empty, or only always_keep, means "no useful match" (it was ``ok``, and
    the proxy re-injected only the kept tool)."""
    alone = _kept(["a"])
    assert (alone.reason, alone.tools) == ("empty_selection", TOOLS)
    assert _kept(["a", "b"]).names == ("a", "b")
    assert _kept(["a"], top_k=1).names == ("a",)  # always_keep fills top_k by itself
    budgeted = Controls(budget=Budget(max_tools=1))
    assert _kept(["a"], controls=budgeted).names == ("a",)  # the budget may have cut it
    assert _kept(["a"], controls=Controls(min_score=0.5)).names == ("a",)


def test_a_definition_the_filters_cannot_read_is_not_permitted() -> None:
    """A definition JSON cannot encode (a ``Path`` default) made the check raise, and the
    client failed open with every tool, the denied ones too."""
    odd = {"name": "get_path", "description": "d", "input_schema": {"default": Path("/x")}}
    tools = [odd, {"name": "delete_all", "description": "d"}, {"name": "read", "description": "d"}]
    assert permitted(tools, Filters(deny=["delete_*"])) == [odd, tools[2]]
    assert permitted(tools, Filters(deny=["get_*"])) == tools[1:]


def test_a_gemini_wrapper_keeps_its_permitted_declarations() -> None:
    """One denied declaration dropped the whole wrapper (every tool of a Gemini app)."""
    decls = [{"name": n, "description": n} for n in ("get_weather", "delete_file", "send")]
    wrapper = {"functionDeclarations": decls}
    assert permitted([wrapper], Filters(deny=["delete_*"])) == [decls[0], decls[2]]
    assert permitted([wrapper], Filters(deny=["nothing_*"])) == [wrapper]
    assert permitted([wrapper], Filters(allow=["zzz"])) == []


def test_the_globs_are_compiled_once_for_all_the_tools() -> None:
    globs = [f"*{i}?x" for i in range(50)]
    tools = [{"name": f"tool_{i}", "description": "d"} for i in range(200)]
    before = policy._matcher.cache_info().misses
    permitted(tools, Filters(deny=globs))
    assert policy._matcher.cache_info().misses == before + 1


def test_an_answer_naming_every_tool_sent_stands_though_all_are_always_keep() -> None:
    tools = [{"name": "a", "description": "a"}, {"name": "b", "description": "b"}]
    prepared = prepare("find", tools, 5, ["a", "b"])
    assert isinstance(prepared, Prepared)
    selection = interpret(prepared, 200, json.dumps({"selected_names": ["b", "a"]}).encode(), 0.0)
    assert (selection.reason, selection.names) == (None, ("b", "a"))
