"""The reference rankers of ``tool-selector eval``, against the formulas the issue gives."""

import numpy as np
import pytest

from tool_selector.offline.evaluation.references import rrf_scores
from tool_selector_client.relevance import relevance_scores, relevance_select


@pytest.mark.parametrize(
    ("query", "tool", "score"),
    [
        ("use send_email now", ("send_email", "x"), 50 + 2 * 10),
        ("send the email", ("send_email", "Deliver mail"), 20),
        ("email email email", ("send_email", ""), 10),
        ("go to db", ("go_db", "to db go"), 0),
        ("the with from", ("the_with", "from"), 0),
        ("Weather TODAY", ("forecast", "weather for today"), 20),
    ],
    ids=[
        "name-in-query",
        "token-overlap",
        "distinct-tokens",
        "short-tokens",
        "stop-words",
        "case-insensitive",
    ],
)
def test_relevance_score(query: str, tool: tuple[str, str], score: int) -> None:
    assert relevance_scores(query, [tool]) == [score]


def test_relevance_select_is_stable_drops_zeros_and_caps() -> None:
    tools = [("a_mail", "mail"), ("b", "nothing"), ("c_mail", "mail"), ("d_mail", "mail send")]
    assert relevance_select("send mail", tools, 2) == ["d_mail", "a_mail"]
    assert relevance_select("send mail", tools, 9) == ["d_mail", "a_mail", "c_mail"]


def test_rrf_is_the_sum_of_reciprocal_ranks_with_k_60() -> None:
    # tool 0: ranks 1 and 10; tool 1: ranks 3 and 3. At K=60 tool 1 wins; at K=1 tool 0 would.
    lexical = np.array([10, 8, 9, 7, 6, 5, 4, 3, 2, 1], dtype=np.float32)
    dense = np.array([0, 8, 10, 9, 7, 6, 5, 4, 3, 2], dtype=np.float32)
    fused = rrf_scores(lexical, dense)
    assert fused[:2] == pytest.approx([1 / 61 + 1 / 70, 2 / 63])
    assert fused[1] > fused[0]
