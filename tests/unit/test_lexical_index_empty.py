from tool_selector.ranking.bm25 import LexicalIndex


def test_index_of_documents_without_tokens_scores_zero() -> None:
    """Found by the endpoint fuzzing: names like "!!!" tokenize to nothing (was a 500)."""
    assert LexicalIndex([[], []]).scores(["x"]).tolist() == [0.0, 0.0]
