import pytest
from hypothesis import given
from hypothesis import strategies as st

from tool_selector.ranking import tokenize as tokenize_module
from tool_selector.ranking.tokenize import _CAMEL, _WORD, split_identifier, tokenize


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


def test_the_stem_memo_is_bounded_in_words_and_in_length() -> None:
    long_word = "a" * 5000 + "s"
    many = " ".join(f"word{i}s" for i in range(tokenize_module._MAX_STEMS + 10))
    assert tokenize(f"{long_word} {many}")[1] == "a" * 5000
    assert len(tokenize_module._STEMS) <= tokenize_module._MAX_STEMS
    assert all(len(w) <= tokenize_module._MAX_STEM_CHARS for w in tokenize_module._STEMS)
