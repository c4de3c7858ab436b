"""Specificity (IDF coverage), explained share and name matching on small catalogs."""

import numpy as np
import pytest

from tool_selector.ranking.bm25 import LexicalIndex
from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.tokenize import name_joins, name_words
from tool_selector_client.wire import Tool

INDEX = LexicalIndex([["send", "message"], ["send", "email"], ["send", "invoice"]])


def test_a_rare_term_weighs_more_than_a_common_one() -> None:
    spec = INDEX.idf_coverage(["send", "email"])
    assert spec[1] == pytest.approx(1.0)
    assert spec[0] < 0.5 < spec[1]


def test_a_term_no_tool_holds_still_counts_in_the_share() -> None:
    assert INDEX.idf_coverage(["email", "teams"])[1] < INDEX.idf_coverage(["email"])[1]


def test_no_terms_give_no_specificity() -> None:
    assert not INDEX.idf_coverage([]).any()


@pytest.mark.parametrize(
    ("terms", "docs", "expected"),
    [(["send", "email"], [1], 1.0), (["teams"], [0, 1, 2], 0.0), ([], [0], 0.0)],
    ids=["whole", "unknown-word", "no-terms"],
)
def test_explained_share(terms: list[str], docs: list[int], expected: float) -> None:
    assert INDEX.explained(terms, np.array(docs)) == pytest.approx(expected)


CATALOG = build_catalog(
    [
        Tool(name="keyvault_secret_get", description="Get a secret"),
        Tool(name="keyvault_key_get", description="Get a key"),
        Tool(name="mcp__slack__send_message", description="Post to Slack"),
    ]
)


def test_the_name_a_pattern_spells_matches_best() -> None:
    match = CATALOG.name_match(name_words("get the secrets of keyvault"))
    assert int(np.argmax(match)) == 0
    assert match[0] == pytest.approx(1.0)


def test_names_sharing_no_word_do_not_match() -> None:
    assert CATALOG.name_match(name_words("send a message"))[:2].tolist() == [0.0, 0.0]


def test_two_words_match_a_name_word_spelled_as_one() -> None:
    catalog = build_catalog(
        [
            Tool(name="functionapp_get", description="x"),
            Tool(name="deploy_plan_get", description="x"),
        ]
    )
    match = catalog.name_match(name_words("show the plan of function app"))
    assert match[0] > match[1]


SUB = LexicalIndex([["configuration", "get"], ["deploy", "get"], ["get", "list"]])


@pytest.mark.parametrize(
    ("terms", "expected"),
    [(["config"], [1.0, 0.0, 0.0]), (["deployment"], [0.0, 1.0, 0.0]), (["teams"], [0, 0, 0])],
    ids=["shorter-word", "longer-word", "no-shared-stub"],
)
def test_subword_coverage_meets_other_forms_of_a_word(
    terms: list[str], expected: list[float]
) -> None:
    assert SUB.subword_coverage(terms).tolist() == pytest.approx(expected)


def test_a_subword_most_tools_share_weighs_little() -> None:
    cover = SUB.subword_coverage(["config", "get"])
    assert cover[0] > 0.5 > cover[1] > 0.0


def test_a_name_word_said_twice_still_joins_its_neighbour() -> None:
    catalog = build_catalog(
        [
            Tool(name="keyvault_key_create", description="x"),
            Tool(name="extension_cli_generate", description="x"),
        ]
    )
    pattern = "Generate a key <key_name> in vault <key_vault_name>"
    joined = catalog.name_match(name_words(pattern), name_joins(pattern))
    assert joined[0] > catalog.name_match(name_words(pattern))[0]
    assert joined[0] > joined[1]
