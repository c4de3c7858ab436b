"""The catalog report's use of a scope's feedback: each tool's counts, and what they say."""

from __future__ import annotations

from tool_selector.learning.learner import Usage
from tool_selector.lint.usage import CALLED_OFTEN, SHOWN_OFTEN, tool_uses, usage_findings
from tool_selector.ranking.learned import tool_identity
from tool_selector.ranking.text import tool_text
from tool_selector_client.catalog_lint import ToolUse
from tool_selector_client.wire import Tool

TEXTS = [
    tool_text(Tool(name="get_a", description="Get an A")),
    tool_text(Tool(name="get_b", description="Get a B")),
    tool_text(Tool(name="get_c", description="Get a C")),
]


def test_each_tool_the_feedback_saw_is_counted_most_shown_first() -> None:
    usage = {
        tool_identity("get_a", "Get an A"): Usage("get_a", 3, 1, 0),
        tool_identity("get_b", "Get a B"): Usage("get_b", 9, 0, 0),
        tool_identity("gone", "not in this catalog"): Usage("gone", 50, 1, 0),
    }
    assert tool_uses(TEXTS, usage) == [ToolUse("get_b", 9, 0, 0), ToolUse("get_a", 3, 1, 0)]


def test_shown_often_never_called_and_called_only_after_a_retry_are_findings() -> None:
    uses = [
        ToolUse("get_a", SHOWN_OFTEN, 0, 0),
        ToolUse("get_b", 40, CALLED_OFTEN, CALLED_OFTEN),
        ToolUse("get_c", 40, CALLED_OFTEN, 1),
        ToolUse("get_d", SHOWN_OFTEN - 1, 0, 0),
    ]
    found = {(f.kind, f.tools[0]) for f in usage_findings(uses)}
    assert found == {("never_called", "get_a"), ("after_retry", "get_b")}
