import pytest

from tool_selector.ranking.catalog import build_catalog, one_edit_apart
from tool_selector.ranking.tokenize import stem, terms, tokenize
from tool_selector_client.wire import Tool


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("files", "file"),
        ("queries", "query"),
        ("messages", "message"),
        ("status", "status"),
        ("address", "address"),
        ("news", "new"),
        ("gas", "gas"),
        ("shoes", "shoe"),
        ("file", "file"),
    ],
    ids=["s", "ies", "es", "us-kept", "ss-kept", "short-plural", "short-kept", "oes-kept", "bare"],
)
def test_stem_reduces_plurals(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getUserFiles", ["get", "user", "file"]),
        ("mcp__github__create_issue", ["mcp", "github", "create", "issue"]),
        ("HTTPRequests", ["http", "request"]),
        ("search-messages.v2", ["search", "message", "v2"]),
    ],
    ids=["camel", "namespaced-snake", "acronym", "kebab-dotted"],
)
def test_terms_split_identifiers_and_stem(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_tokenize_drops_stop_words_but_terms_keeps_them() -> None:
    assert tokenize("find the files") == ["find", "file"]
    assert terms("get_the_file") == ["get", "the", "file"]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("create_isue", "create_issue", True),
        ("create_issue_", "create_issue", True),
        ("creatw_issue", "create_issue", True),
        ("create_issue", "create_issue", False),
        ("craete_issue", "create_issue", False),
        ("delete_issue", "create_issue", False),
    ],
    ids=["deletion", "insertion", "substitution", "equal-is-exact-not-near", "two-edits", "far"],
)
def test_one_edit_apart(a: str, b: str, expected: bool) -> None:
    assert one_edit_apart(a, b) is expected


CATALOG = build_catalog(
    [Tool(name="mcp__github__create_issue"), Tool(name="list_issues"), Tool(name="send")]
)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("create_isue", (0,)),
        ("mcp__github__create_isue", (0,)),
        ("list_issue", (1,)),
        ("sen", ()),
        ("create isue", ()),
    ],
    ids=["bare-name-typo", "namespaced-typo", "missing-plural", "too-short", "not-a-name"],
)
def test_near_matches(pattern: str, expected: tuple[int, ...]) -> None:
    assert CATALOG.near_matches(pattern) == expected
