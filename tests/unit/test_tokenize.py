import pytest
from hypothesis import given
from hypothesis import strategies as st

from tool_selector.ranking import tokenize as tokenize_module
from tool_selector.ranking.tokenize import (
    _CAMEL,
    _WORD,
    STOP_WORDS,
    _forms,
    fold,
    is_ngram,
    lexical_words,
    split_identifier,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("getWeatherForecast", ["get", "weather", "forecast"]),
        ("create_issue", ["create", "issue"]),
        ("mcp__github__create-issue", ["mcp", "github", "create", "issue"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("files.read/v2", ["files", "read", "v2"]),
        ("Grüße_Welt", ["grüße", "welt"]),
    ],
    ids=["camel", "snake", "mcp", "acronym", "dotted", "unicode"],
)
def test_split_identifier(text: str, words: list[str]) -> None:
    assert split_identifier(text) == words


def test_tokenize_drops_stop_words() -> None:
    assert tokenize("Find the files with auth middleware") == [
        "find",
        "files",
        "file",
        "auth",
        "middleware",
    ]


def camel_then_words(text: str) -> list[str]:
    """The definition: camel boundaries over the whole text, then words, lowercased."""
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text))]


@given(st.text(alphabet=st.sampled_from("aBcZ09_-. /éÉßİ\u0130x"), max_size=40) | st.text())
def test_split_identifier_equals_the_whole_text_camel_split(text: str) -> None:
    assert split_identifier(text) == camel_then_words(text)


@given(st.lists(st.sampled_from(["getWeather", "HTTPServer", "Files", "a_b", "ÉtéX"]), max_size=6))
def test_a_word_split_before_is_split_the_same(words: list[str]) -> None:
    """The split memo: the same words again (and in other texts) give the same split."""
    text = " ".join(words)
    first = split_identifier(text)
    assert split_identifier(text) == first == camel_then_words(text)
    assert split_identifier(f"Say {text}") == ["say", *first]


def test_the_split_memo_is_bounded_in_words_and_in_length() -> None:
    long_word = "aB" * 3000
    many = " ".join(f"wordN{i}" for i in range(tokenize_module._MAX_STEMS + 10))
    try:
        assert split_identifier(f"{long_word} {many}")[:2] == ["a", "ba"]
        assert len(tokenize_module._SPLITS) <= tokenize_module._MAX_STEMS
        assert all(len(w) <= tokenize_module._MAX_STEM_CHARS for w in tokenize_module._SPLITS)
        last = f"wordN{tokenize_module._MAX_STEMS + 9}"
        assert tokenize_module._SPLITS[last] == last.replace("N", " n")  # one string
    finally:
        tokenize_module._SPLITS.clear()


def test_the_stem_memo_is_bounded_in_words_and_in_length() -> None:
    long_word = "a" * 5000 + "s"
    many = " ".join(f"word{i}s" for i in range(tokenize_module._MAX_STEMS + 10))
    assert tokenize(f"{long_word} {many}")[1] == "a" * 5000
    assert len(tokenize_module._STEMS) <= tokenize_module._MAX_STEMS
    assert all(len(w) <= tokenize_module._MAX_STEM_CHARS for w in tokenize_module._STEMS)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("查询文件元数据 manage.query_file_info",
         ["查询", "询文", "文件", "件元", "元数", "数据", "manage", "query", "file", "info"]),
        ("ファイルを検索", ["ファ", "ァイ", "イル", "ルを", "を検", "検索"]),
        ("が ガ", ["が", "ガ"]),
        ("파일 검색", ["파일", "검색"]),
        ("ค้นหา", ["ค้", "้น", "นห", "หา"]),
        ("Größe café résuméFile Việt", ["grosse", "cafe", "resume", "file", "viet"]),
        ("\uff46\uff55\uff4c\uff4c ﾌｧｲﾙ", ["full", "ファ", "ァイ", "イル"]),
        ("send文件to", ["send", "文件", "to"]),
    ],
    ids=["han", "kana", "voiced-kana", "hangul", "thai", "accents", "full-half-width", "mixed"],
)  # fmt: skip
def test_lexical_words_in_any_script(text: str, words: list[str]) -> None:
    assert lexical_words(text) == words


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_is_read_exactly_as_before(text: str) -> None:
    assert lexical_words(text) == split_identifier(text)
    assert tokenize(text) == _forms([w for w in split_identifier(text) if w not in STOP_WORDS])


@given(st.text())
def test_folding_twice_changes_nothing_more(text: str) -> None:
    assert fold(fold(text)) == fold(text)


@pytest.mark.parametrize(
    ("term", "ngram"),
    [("查询", True), ("文", True), ("ファ", True), ("파일", True), ("ค้", True),
     ("file", False), ("grosse", False), ("v2", False), ("", False)],
    ids=["han", "lone-han", "kana", "hangul", "thai", "ascii", "folded", "digits", "empty"],
)  # fmt: skip
def test_is_ngram_tells_unsegmented_pieces_from_words(term: str, ngram: bool) -> None:
    assert is_ngram(term) is ngram


@given(st.text())
def test_every_term_is_a_word_or_an_ngram_never_both(text: str) -> None:
    for term in lexical_words(text):
        assert is_ngram(term) == any(is_ngram(c) for c in term)
