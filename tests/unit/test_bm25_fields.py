"""BM25's two fields: words, and the n-grams of unsegmented text (Han, kana, Hangul, Thai).

Counted with the words, a Chinese description's bigrams made its tool's document several
times longer, so BM25's length normalisation sank that tool's English name words and moved
the average length every other tool is normalised by (livemcpbench test split, lexical
path: R@1 26.7 -> 24.6). These tests hold the n-grams to their own field.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_bm25_oracle import LuceneBM25
from tool_selector.ranking.bm25 import LexicalIndex
from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.tokenize import tokenize
from tool_selector_client.wire import Tool

WORDS = ["file", "read", "send", "card", "search", "w1"]
GRAMS = ["查询", "询文", "文件", "发送", "邮件", "卡"]


@given(
    docs=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), max_size=12),
            st.lists(st.sampled_from(GRAMS), max_size=40),
        ),
        max_size=20,
    ),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), max_size=5, unique=True),
)
def test_ngrams_never_move_the_score_of_a_query_of_words(
    docs: list[tuple[list[str], list[str]]], query: list[str]
) -> None:
    mixed = LexicalIndex([words + grams for words, grams in docs])
    words_only = LexicalIndex([words for words, _ in docs])
    np.testing.assert_array_equal(mixed.scores(query), words_only.scores(query))


def test_the_ngram_field_is_bm25_over_the_documents_holding_ngrams() -> None:
    docs = [["send", "文件"], ["read"], ["文件", "件元", "元数", "file"], ["file"]]
    ours = LexicalIndex(docs).scores(["文件", "元数"])
    holders = [["文件"], ["文件", "件元", "元数"]]
    oracle = LuceneBM25(holders, k1=1.2, b=0.75).get_scores(["文件", "元数"])
    # Lucene drops BM25's constant (k1 + 1) numerator factor (test_bm25_oracle).
    expected = [oracle[0] / 2.2, 0.0, oracle[1] / 2.2, 0.0]
    np.testing.assert_allclose(ours, expected, rtol=1e-5)


def test_the_fields_add_up_for_a_query_of_both() -> None:
    index = LexicalIndex([["send", "文件"], ["send", "mail"], ["文件"]])
    both = index.scores(["send", "文件"])
    np.testing.assert_allclose(both, index.scores(["send"]) + index.scores(["文件"]))


def test_one_field_when_asked_as_the_frozen_references_ask() -> None:
    docs = [["send", "文件", "件元"], ["send", "mail"], ["read"]]
    ours = LexicalIndex(docs, ngram_field=False).scores(["send", "文件"])
    oracle = LuceneBM25(docs, k1=1.2, b=0.75).get_scores(["send", "文件"])
    np.testing.assert_allclose(ours * 2.2, oracle, rtol=1e-5)


def test_a_chinese_description_leaves_english_scores_as_without_it() -> None:
    english = [
        Tool(name="get_card_volume", description="Trading volume of a card market"),
        Tool(name="read_file", description="Read a file from the local disk"),
    ]
    chinese = "根据卡片名称、效果描述或编号搜索游戏王卡片数据库"
    described = Tool(name="search_cards", description=chinese)
    bare = Tool(name="search_cards", description="")
    query = tokenize("search the card list")
    with_chinese = build_catalog([described, *english]).index.scores(query)
    without = build_catalog([bare, *english]).index.scores(query)
    assert with_chinese.tolist() == without.tolist()


def test_a_chinese_request_still_meets_a_chinese_description() -> None:
    tools = [
        Tool(name="search_cards", description="根据卡片名称搜索游戏王卡片数据库"),
        Tool(name="send_mail", description="发送电子邮件给指定的收件人"),
        Tool(name="read_file", description="Read a file from the local disk"),
    ]
    scores = build_catalog(tools).index.scores(tokenize("帮我搜索一张游戏王卡片"))
    assert int(np.argmax(scores)) == 0
    assert scores[1:].tolist() == [0.0, 0.0]
