"""Selection rules of SPEC.md, one behaviour each (fake encoder where embeddings matter)."""

import math

import pytest

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import normalise_name
from tool_selector_client.wire import SearchRequest, Tool

CATALOG = [
    Tool(name="read_file", description="Read a file from the local disk"),
    Tool(name="mcp__slack__send_message", description="Post a message to a Slack channel"),
    Tool(name="mcp__github__create_issue", description="Open a new GitHub issue"),
    Tool(name="github.list_issues", description="List issues of a repository"),
    Tool(name="get_weather", description="Current weather forecast for a city"),
]


def pick(
    pattern: str,
    *,
    top_k: int = 5,
    keep: tuple[str, ...] = (),
    tools: list[Tool] | None = None,
    lexical: bool = False,
) -> list[str]:
    selector = Selector(
        encoder=None if lexical else HashingEncoder(),
        cache=MemoryCache(1 << 20),
        embed_deadline=math.inf,
    )
    request = SearchRequest(
        pattern=pattern, tools=tools or CATALOG, top_k=top_k, always_keep=list(keep)
    )
    return selector.select(request).ranking.names


@pytest.mark.parametrize(
    "pattern",
    ["create_issue", "CREATE_ISSUE", "mcp__github__create_issue", "github.create_issue"],
    ids=["bare", "case", "full", "dotted-namespace"],
)
def test_pattern_naming_a_tool_ranks_it_first(pattern: str) -> None:
    assert pick(pattern)[0] == "mcp__github__create_issue"


def test_a_name_matches_under_unicode_case_folding() -> None:
    tools = [
        Tool(name="strasse_finden", description="strasse strasse strasse"),
        Tool(name="straße", description="Weg"),
    ]
    assert pick("STRASSE", tools=tools)[0] == "straße"


@pytest.mark.parametrize(
    ("pattern", "names", "first"),
    [
        ("create_issue", ["mcp__github__create_issue", "create_issue"], "create_issue"),
        ("Read_File", ["read_file", "Read_File"], "Read_File"),
        ("read_file", ["Read_File", "read_file"], "read_file"),
        ("create_issue", ["github.create_issue", "Create_Issue"], "Create_Issue"),
    ],
    ids=["full-over-bare", "typed-case-over-other-case", "lower-over-upper", "full-over-bare-case"],
)
def test_the_most_exactly_named_tool_ranks_first(
    pattern: str, names: list[str], first: str
) -> None:
    strong = Tool(name=names[0], description="create issue, read file")
    exact = Tool(name=names[1], description="An unrelated tool")
    for lexical in (False, True):
        assert pick(pattern, tools=[strong, exact], lexical=lexical)[0] == first


@pytest.mark.parametrize(
    ("pattern", "names", "first"),
    [
        ("email", ["send_email", "gmail"], "send_email"),
        ("files", ["list_files", "filer"], "list_files"),
        ("weathr", ["weather_alerts", "weather"], "weather"),
        ("Grepp", ["grep_search", "Grep"], "Grep"),
    ],
    ids=["keyword-not-typo", "stemmed-keyword-not-typo", "typo-still-lifted", "four-letter-name"],
)
def test_a_keyword_of_the_catalog_is_not_taken_for_a_typo(
    pattern: str, names: list[str], first: str
) -> None:
    tools = [Tool(name=names[0], description="x"), Tool(name=names[1], description="x")]
    assert pick(pattern, tools=tools, lexical=True)[0] == first


def test_exact_name_wins_even_against_stronger_text_match() -> None:
    tools = [
        Tool(name="search", description="lookup lookup lookup lookup"),
        Tool(name="lookup", description="Find a record"),
    ]
    assert pick("lookup", tools=tools)[0] == "lookup"


def test_keyword_pattern_finds_the_tool() -> None:
    assert pick("slack send message")[0] == "mcp__slack__send_message"


def test_always_keep_is_included_and_counts_toward_top_k() -> None:
    out = pick("slack send message", top_k=2, keep=("get_weather",))
    assert len(out) <= 2
    assert "get_weather" in out
    assert out[0] == "mcp__slack__send_message"


@pytest.mark.parametrize("lexical", [False, True], ids=["hybrid", "lexical"])
def test_an_always_keep_that_also_ranks_first_leaves_room_for_the_next(lexical: bool) -> None:
    tools = [
        Tool(name="slack_send_message", description="Send a message to Slack"),
        Tool(name="discord_send_message", description="Send a message to Discord"),
    ]
    keep = ("slack_send_message",)
    out = pick("send message", top_k=2, keep=keep, tools=tools, lexical=lexical)
    assert out == ["slack_send_message", "discord_send_message"]


def test_unknown_always_keep_is_ignored() -> None:
    assert "nope" not in pick("slack send message", keep=("nope",))


def test_more_always_keep_than_top_k_keeps_the_best_scoring() -> None:
    out = pick("weather", top_k=1, keep=("read_file", "get_weather"))
    assert out == ["get_weather"]


def test_nothing_relevant_answers_empty() -> None:
    assert pick("quantum chromodynamics lattice") == []


def test_nothing_relevant_answers_only_always_keep() -> None:
    assert pick("quantum chromodynamics lattice", keep=("read_file",)) == ["read_file"]


def test_lexical_path_answers_without_encoder() -> None:
    assert pick("github issues", lexical=True)[0] == "github.list_issues"


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("forecasting for tomorrow", ["get_weather"]), ("quantum chromodynamics lattice", [])],
    ids=["a-shared-subword-answers", "nothing-shared-abstains"],
)
def test_lexical_path_reads_subwords(pattern: str, expected: list[str]) -> None:
    assert pick(pattern, lexical=True)[:1] == expected


def test_duplicates_merge_first_wins() -> None:
    tools = [Tool(name="t", description="weather forecast"), Tool(name="t", description="files")]
    selector = Selector(encoder=HashingEncoder(), cache=MemoryCache(1 << 20))
    outcome = selector.select(SearchRequest(pattern="weather", tools=tools))
    assert outcome.ranking.names == ["t"]
    assert outcome.duplicates == 1


def test_empty_tool_list_answers_empty() -> None:
    selector = Selector(encoder=HashingEncoder())
    assert selector.select(SearchRequest(pattern="x", tools=[])).ranking.names == []


def test_tool_embeddings_are_cached_across_requests() -> None:
    encoder = HashingEncoder()
    selector = Selector(encoder=encoder, cache=MemoryCache(1 << 20), embed_deadline=math.inf)
    request = SearchRequest(pattern="weather", tools=CATALOG)
    first = selector.select(request)
    second = selector.select(request)
    assert (first.cache_misses, second.cache_misses) == (len(CATALOG), 0)
    assert second.cache_hits == len(CATALOG)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Create Issue", "create_issue"),
        ("create-issue", "create_issue"),
        (" github.create_issue ", "github_create_issue"),
        ("STRASSE_SUCHEN", "straße_suchen"),
    ],
    ids=["space", "dash", "dot", "unicode-casefold"],
)
def test_normalise_name(a: str, b: str) -> None:
    assert normalise_name(a) == normalise_name(b)


CHINESE = [
    Tool(name="bing_search", description="使用必应搜索指定的关键词\uff0c并返回搜索结果列表"),
    Tool(name="query_file_info", description="查询文件元数据\uff0c包括大小和修改时间"),
    Tool(name="send_mail", description="发送电子邮件给指定的收件人"),
]


@pytest.mark.parametrize(
    ("pattern", "first"),
    [("帮我查一下这个文件的元数据", "query_file_info"), ("用必应搜索新闻", "bing_search"),
     ("给老板发一封电子邮件", "send_mail")],
    ids=["file-metadata", "search", "mail"],
)  # fmt: skip
def test_a_chinese_request_meets_a_chinese_description(pattern: str, first: str) -> None:
    assert pick(pattern, tools=CHINESE, lexical=True)[0] == first


def test_a_name_matches_with_its_accents_folded() -> None:
    tools = [Tool(name="resume_builder", description="x"), Tool(name="résumé", description="y")]
    assert pick("RESUME", tools=tools)[0] == "résumé"
