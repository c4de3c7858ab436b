import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tool_selector.ranking.catalog import (
    MIN_TYPO_CHARS,
    Catalog,
    build_catalog,
    normalise_name,
    one_edit_apart,
)
from tool_selector.ranking.tokenize import (
    lexical_words,
    name_joins,
    name_words,
    stem,
    subword,
    terms,
    tokenize,
)
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
        ("getUserFiles", ["get", "user", "files", "file"]),
        ("mcp__github__create_issue", ["mcp", "github", "create", "issue"]),
        ("HTTPRequests", ["http", "requests", "request"]),
        ("search-messages.v2", ["search", "messages", "message", "v2"]),
    ],
    ids=["camel", "namespaced-snake", "acronym", "kebab-dotted"],
)
def test_terms_split_identifiers_and_add_singulars(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_tokenize_drops_stop_words_but_terms_keeps_them() -> None:
    assert tokenize("find the files") == ["find", "files", "file"]
    assert terms("get_the_file") == ["get", "the", "file"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("keyvault_secrets_get", ["keyvault", "secret", "get"]),
        ("Slack_InviteToChannel", ["slack", "invite", "channel"]),
        ("list the files, list them", ["list", "file", "them"]),
    ],
    ids=["singular-verbs-kept", "to-dropped", "distinct"],
)
def test_name_words_are_distinct_singulars_without_name_stop_words(
    text: str, expected: list[str]
) -> None:
    assert name_words(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key <key_vault_name>", [("key", "key"), ("key", "vault"), ("vault", "name")]),
        ("function app", [("function", "app")]),
        ("to", []),
    ],
    ids=["read-before-duplicates-drop", "two-words", "one-word"],
)
def test_name_joins_are_adjacent_pairs(text: str, expected: list[tuple[str, str]]) -> None:
    assert name_joins(text) == expected


@pytest.mark.parametrize(
    ("term", "expected"),
    [("configuration", "confi"), ("config", "confi"), ("get", "get")],
    ids=["long", "just-longer", "short-stays-whole"],
)
def test_subword_cuts_to_the_first_characters(term: str, expected: str) -> None:
    assert subword(term) == expected


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


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


@settings(max_examples=300, deadline=None)
@given(st.text("abc_", max_size=7), st.text("abc_", max_size=7))
def test_one_edit_apart_is_levenshtein_distance_one(a: str, b: str) -> None:
    assert one_edit_apart(a, b) is (_levenshtein(a, b) == 1)


def _scanned(catalog: Catalog, pattern: str) -> tuple[int, ...]:
    """``near_matches`` as it read every name before names were grouped by length."""
    key = normalise_name(pattern)
    if len(key) < MIN_TYPO_CHARS or any(c.isspace() for c in pattern.strip()):
        return ()
    if "_" not in key and {stem(w) for w in lexical_words(key)} <= catalog.name_words:
        return ()
    hits = {
        i
        for name, idx in catalog.by_name.items()
        if len(name) >= MIN_TYPO_CHARS - 1 and one_edit_apart(key, name)
        for i in idx
    }
    return tuple(sorted(hits))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text("abc_ ", min_size=2, max_size=9), min_size=1, max_size=12, unique=True),
    st.text("abcA_-", min_size=3, max_size=10),
)
def test_near_matches_read_by_length_are_those_of_every_name(names: list[str], key: str) -> None:
    catalog = build_catalog([Tool(name=n) for n in names if n.strip()] or [Tool(name="x")])
    assert catalog.near_matches(key) == _scanned(catalog, key)
