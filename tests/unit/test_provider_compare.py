"""The provider-search emulations of the comparison script, on small catalogs."""

from __future__ import annotations

from tool_selector.offline.provider_compare import (
    MAX_REGEX_CHARS,
    Row,
    bm25_ranker,
    model_regex,
    regex_ranker,
    searched_text,
    table,
)
from tool_selector_client.wire import Tool

NAMES = ["get_weather", "send_email", "send_sms", "read_file"]
TEXTS = [
    "get_weather Current weather for a city",
    "send_email Send an email message",
    "send_sms Send a text message to a phone",
    "read_file Read a file from disk",
]


def test_the_model_regex_ors_the_query_words_case_insensitively() -> None:
    regex = model_regex("Please send the Email to Bob")
    assert regex is not None
    assert regex.pattern == "(?i)send|email|bob"
    assert model_regex("to a of") is None


def test_the_model_regex_keeps_to_the_documented_200_characters() -> None:
    regex = model_regex(" ".join(f"word{i:03d}" for i in range(100)))
    assert regex is not None
    assert len(regex.pattern) <= MAX_REGEX_CHARS


def test_regex_matches_rank_by_distinct_words_then_catalog_order() -> None:
    rank = regex_ranker(NAMES, TEXTS)
    assert rank("send an email message") == ["send_email", "send_sms"]
    assert rank("quantum") == []


def test_bm25_loads_only_tools_that_score() -> None:
    rank = bm25_ranker(NAMES, TEXTS)
    assert rank("weather in paris") == ["get_weather"]


def test_the_searched_text_holds_argument_names_and_descriptions() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string", "description": "Town"}}}
    tool = Tool(name="w", description="d", definition={"name": "w", "input_schema": schema})
    assert searched_text(tool) == "w d city Town"


def test_the_table_has_one_row_per_set() -> None:
    row = Row("agent", 3, queries=2)
    row.columns["ours"].recall = 1.5
    row.columns["ours"].loaded = 10
    lines = table([row]).splitlines()
    assert lines[2].startswith("| agent | 3 | 2 | 0.750 (5.0) | 0.000 (0.0)")
