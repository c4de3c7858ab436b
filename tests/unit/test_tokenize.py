import pytest

from tool_selector.ranking.tokenize import split_identifier, tokenize


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
        "file",
        "auth",
        "middleware",
    ]
