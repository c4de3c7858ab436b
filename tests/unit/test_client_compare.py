"""Agreement measures between our picks and relevance's."""

from __future__ import annotations

import pytest

from tool_selector_client.compare import Agreement, agreement


@pytest.mark.parametrize(
    ("ours", "theirs", "forced", "expected"),
    [
        (["a", "b"], ["a", "b"], [], Agreement(True, 1.0, 1.0, "none")),
        (["a", "b"], ["b", "c"], [], Agreement(False, 0.5, 1 / 3, "none")),
        (["a"], ["a", "b", "c", "d"], [], Agreement(True, 0.25, 0.25, "none")),
        ([], ["a"], [], Agreement(None, 0.0, 0.0, "selector")),
        (["a"], [], [], Agreement(None, 0.0, 0.0, "relevance")),
        ([], [], [], Agreement(None, None, None, "both")),
        (["keep", "a"], ["a"], ["keep"], Agreement(True, 1.0, 1.0, "none")),
        (["keep"], [], ["keep"], Agreement(None, None, None, "both")),
    ],
    ids=["same", "partial", "short", "we_abstain", "they_abstain", "both", "forced", "forced_only"],
)
def test_agreement(
    ours: list[str], theirs: list[str], forced: list[str], expected: Agreement
) -> None:
    assert agreement(ours, theirs, forced) == expected
