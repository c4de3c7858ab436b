"""The caller's controls, one behaviour each: traits read from definitions, each filter,
the budget's walk, min_score, context, and explain's counts (lexical path: exact scores)."""

import math

import msgspec
import numpy as np
import pytest

from tests.fakes import HashingEncoder
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.context import context_text
from tool_selector.ranking.controls import Traits, allowed, fit_budget
from tool_selector_client.wire import Budget, Context, Filters, Tool


def mcp(name: str, description: str, **hints: bool) -> Tool:
    definition: dict[str, object] = {"name": name, "description": description, "inputSchema": {}}
    if hints:
        definition["annotations"] = hints
    return Tool(name=name, definition=definition)


CATALOG = [
    mcp("github__delete_repo", "delete a github repository", destructiveHint=True),
    mcp("github__get_repo", "read a github repository", readOnlyHint=True),
    mcp("github__update_repo", "change a github repository", destructiveHint=False),
    mcp("github__list_repos", "list github repositories"),
    Tool(name="slack_send", description="send a slack message", safe=False),
]
SELECTOR = Selector(encoder=None)


def ask(pattern: str, **controls: object) -> list[str]:
    request = Ask(pattern, ToolSource.of(CATALOG), top_k=5, **controls)  # type: ignore[arg-type]
    return SELECTOR.select(request).ranking.names


@pytest.mark.parametrize(
    ("tool", "facts"),
    [
        (mcp("a", "x", readOnlyHint=True), (True, False, False)),
        (mcp("a", "x", readOnlyHint=True, destructiveHint=True), (True, False, False)),
        (mcp("a", "x", destructiveHint=False), (False, False, False)),
        (mcp("a", "x"), (False, True, False)),
        (Tool(name="a", safe=False), (False, True, True)),
        (
            Tool(
                name="a",
                definition={
                    "type": "function",
                    "function": {"name": "a", "annotations": {"readOnlyHint": True}},
                },
            ),
            (True, False, False),
        ),
    ],
    ids=[
        "read-only",
        "read-only-wins",
        "not-destructive",
        "unannotated",
        "unsafe",
        "openai-wrapped",
    ],
)
def test_traits_follow_the_mcp_defaults(tool: Tool, facts: tuple[bool, bool, bool]) -> None:
    traits = Traits.of([tool])
    assert (bool(traits.read_only[0]), bool(traits.destructive[0]), bool(traits.unsafe[0])) == facts


def test_size_is_the_compact_json_of_the_definition() -> None:
    tool = mcp("a", "b c")
    assert Traits.of([tool]).size[0] == len(msgspec.json.encode(tool.definition))


@pytest.mark.parametrize(
    ("filters", "left"),
    [
        (
            Filters(deny=["*delete*"]),
            ["github__get_repo", "github__update_repo", "github__list_repos"],
        ),
        (Filters(allow=["get_*", "list_*"]), ["github__get_repo", "github__list_repos"]),
        (Filters(read_only=True), ["github__get_repo"]),
        (Filters(exclude_destructive=True), ["github__get_repo", "github__update_repo"]),
        (Filters(allow_unsafe=True), [t.name for t in CATALOG]),
        (Filters(), [t.name for t in CATALOG[:4]]),
    ],
    ids=[
        "deny-bare",
        "allow-bare",
        "read-only",
        "no-destructive",
        "unsafe-allowed",
        "unsafe-out-by-default",
    ],
)
def test_each_filter(filters: Filters, left: list[str]) -> None:
    names = [(t.name, t.name.split("__")[-1]) for t in CATALOG]
    mask, _ = allowed(names, Traits.of(CATALOG), filters)
    assert [t.name for t, ok in zip(CATALOG, mask, strict=True) if ok] == left


def test_a_tool_failing_two_filters_is_counted_once() -> None:
    names = [(t.name, t.name) for t in CATALOG]
    _, removed = allowed(names, Traits.of(CATALOG), Filters(deny=["*delete*"], read_only=True))
    assert (removed["deny"], removed["unsafe"], removed["read_only"]) == (1, 1, 2)


def test_filters_beat_always_keep_and_the_exact_name() -> None:
    got = ask(
        "github__delete_repo",
        always_keep=("github__delete_repo",),
        filters=Filters(deny=["*delete*"]),
    )
    assert "github__delete_repo" not in got


def test_no_filters_object_keeps_unsafe_tools() -> None:
    assert "slack_send" in ask("send a slack message")


@pytest.mark.parametrize(
    ("sizes", "count", "max_bytes", "taken"),
    [
        ([10, 10, 10], 5, None, [0, 1, 2]),
        ([10, 50, 10], 5, 30, [0, 2]),
        ([50, 10, 10], 5, 30, [1, 2]),
        ([10, 10, 10], 2, 100, [0, 1]),
        ([40], 5, 30, []),
    ],
    ids=["no-cap", "skip-big-keep-better", "oversized-first", "count-cap", "alone-too-big"],
)
def test_budget_walk(sizes: list[int], count: int, max_bytes: int | None, taken: list[int]) -> None:
    got = fit_budget(range(len(sizes)), np.array(sizes), count, max_bytes)
    assert got == taken


def test_max_tools_caps_below_top_k() -> None:
    assert len(ask("github repository", budget=Budget(max_tools=2))) == 2


def test_min_score_one_empties_a_ranked_answer() -> None:
    assert ask("github repository", min_score=1.0) == []


def test_recent_tools_find_a_follow_up() -> None:
    context = Context(recent_tools=["slack_send"])
    assert (
        ask("show me the next 2", filters=Filters(allow_unsafe=True), context=context)[0]
        == "slack_send"
    )


def test_context_text_keeps_the_most_recent_characters() -> None:
    text = context_text(["old " * 400, "newest words"])
    assert text.endswith("newest words")
    assert len(text) <= 1000


@pytest.mark.parametrize("dense", [False, True], ids=["lexical", "hybrid"])
def test_explain_ranks_count_only_the_tools_the_filters_leave_in(dense: bool) -> None:
    """The denied tool scores highest on both halves; the best tool left in ranks first."""
    selector = Selector(encoder=HashingEncoder() if dense else None, embed_deadline=math.inf)
    request = Ask(
        "delete a github repository",
        ToolSource.of(CATALOG),
        top_k=5,
        explain=True,
        filters=Filters(deny=["*delete*"]),
    )
    first = selector.select(request).ranking.picked[0]
    assert (first.bm25_rank, first.dense_rank) == (1, 1 if dense else None)
