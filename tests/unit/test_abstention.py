"""The ranker's "no useful match" and per-tool bar, through the Selector with a fake encoder."""

import pytest

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.pipeline.selector import Selector
from tool_selector_client.wire import SearchRequest, Tool

TOOLS = [
    Tool(name="read_file", description="Read a file from disk"),
    Tool(name="mcp__slack__send_message", description="Post a message to a Slack channel"),
    Tool(name="get_weather", description="Current weather forecast for a city"),
]
SELECTOR = Selector(encoder=HashingEncoder())


def pick(pattern: str, always_keep: list[str] | None = None, top_k: int = 5) -> list[str]:
    request = SearchRequest(
        pattern=pattern, tools=TOOLS, top_k=top_k, always_keep=always_keep or []
    )
    return SELECTOR.select(request).ranking.names


def test_a_fitting_pattern_is_answered() -> None:
    assert pick("post a slack message to the channel")[0] == "mcp__slack__send_message"


@pytest.mark.parametrize(
    ("always_keep", "expected"),
    [([], []), (["read_file"], ["read_file"]), (["nope"], [])],
    ids=["empty", "only-always-keep", "unknown-always-keep"],
)
def test_no_useful_match_returns_only_always_keep(
    always_keep: list[str], expected: list[str]
) -> None:
    assert pick("quantum chromodynamics lattice", always_keep) == expected


def test_no_useful_match_is_flagged() -> None:
    request = SearchRequest(pattern="quantum chromodynamics lattice", tools=TOOLS)
    assert SELECTOR.select(request).ranking.no_match


@pytest.mark.parametrize(
    "pattern",
    ["GET_WEATHER", "send_message", "get_wether"],
    ids=["exact-case", "bare-namespaced", "one-typo"],
)
def test_a_named_tool_comes_first_even_without_other_evidence(pattern: str) -> None:
    names = pick(pattern)
    assert names[0] in {"get_weather", "mcp__slack__send_message"}
    assert pattern.lower().replace("wether", "weather").endswith(names[0].split("__")[-1])


def test_ranked_keeps_the_order_before_the_bar() -> None:
    ranking = SELECTOR.select(SearchRequest(pattern="quantum chromodynamics", tools=TOOLS)).ranking
    assert ranking.names == []
    assert len(ranking.ranked) == 3


def test_an_exact_name_beats_a_much_stronger_lexical_match() -> None:
    tools = [Tool(name=f"tool_{i}", description=f"does thing {i}") for i in range(400)]
    tools += [Tool(name="mail_mail", description="mail " * 8)]
    tools += [Tool(name="mail", description=" ".join(f"w{i}" for i in range(40)))]
    request = SearchRequest(pattern="mail", tools=tools, top_k=3)
    assert SELECTOR.select(request).ranking.names[0] == "mail"


def test_an_empty_memory_cache_is_used_not_replaced() -> None:
    cache = MemoryCache(1 << 20)
    selector = Selector(encoder=HashingEncoder(), cache=cache)
    selector.select(SearchRequest(pattern="read a file", tools=TOOLS))
    assert selector.select(SearchRequest(pattern="read a file", tools=TOOLS)).cache_hits == 3
