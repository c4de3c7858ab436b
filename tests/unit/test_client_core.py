"""The proxy's validation rules applied to the service's answer (sans-I/O core)."""

from __future__ import annotations

import json

import pytest

from tool_selector_client.core import Prepared, Selection, interpret, prepare

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
