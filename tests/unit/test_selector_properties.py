"""Hypothesis properties of the whole selection pipeline (fake encoder, real ranking)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import normalise_name
from tool_selector_client.wire import SearchRequest, Tool

WORDS = [
    "send",
    "message",
    "slack",
    "file",
    "read",
    "issue",
    "create",
    "weather",
    "search",
    "github",
    "calendar",
    "event",
    "list",
    "delete",
    "user",
    "order",
]
cases = st.sampled_from([str.lower, str.upper, str.title])
names = st.builds(
    lambda words, case: case("_".join(words)),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    cases,
)
tools = st.builds(
    Tool,
    name=names,
    description=st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)),
)
patterns = st.lists(st.sampled_from([*WORDS, "the", "unrelated"]), min_size=1, max_size=5).map(
    " ".join
)


def request_strategy() -> st.SearchStrategy[SearchRequest]:
    return st.builds(
        lambda p, ts, k, keep: SearchRequest(pattern=p, tools=ts, top_k=k, always_keep=keep),
        patterns,
        st.lists(tools, max_size=25),
        st.integers(1, 8),
        st.lists(st.one_of(names, st.just("not_a_tool")), max_size=4),
    )


# no embedding deadline: these properties are about ranking, not the cold path
SELECTOR = Selector(encoder=HashingEncoder(), cache=MemoryCache(1 << 20), embed_deadline=math.inf)
LEXICAL = Selector(encoder=None)


@settings(max_examples=150, deadline=None)
@given(request_strategy())
def test_answer_is_a_unique_subset_within_top_k(request: SearchRequest) -> None:
    names_out = SELECTOR.select(request).ranking.names
    assert set(names_out) <= {t.name for t in request.tools}
    assert len(names_out) == len(set(names_out))
    assert len(names_out) <= request.top_k


@settings(max_examples=100, deadline=None)
@given(request_strategy())
def test_answer_is_deterministic(request: SearchRequest) -> None:
    assert SELECTOR.select(request).ranking.names == SELECTOR.select(request).ranking.names


@settings(max_examples=100, deadline=None)
@given(request_strategy())
def test_lexical_answer_is_deterministic(request: SearchRequest) -> None:
    assert LEXICAL.select(request).ranking.names == LEXICAL.select(request).ranking.names


@settings(max_examples=150, deadline=None)
@given(request_strategy())
def test_present_always_keep_names_are_kept(request: SearchRequest) -> None:
    present = {t.name for t in request.tools} & set(request.always_keep)
    out = set(SELECTOR.select(request).ranking.names)
    if len(present) <= request.top_k:
        assert present <= out
    else:
        assert len(out) == request.top_k
        assert out <= present


@settings(max_examples=100, deadline=None)
@given(request_strategy(), st.data())
def test_duplicate_entries_do_not_change_the_answer(
    request: SearchRequest, data: st.DataObject
) -> None:
    if not request.tools:
        return
    extra = data.draw(st.lists(st.sampled_from(request.tools), min_size=1, max_size=5))
    doubled = SearchRequest(
        pattern=request.pattern,
        tools=[*request.tools, *extra],
        top_k=request.top_k,
        always_keep=request.always_keep,
    )
    assert SELECTOR.select(doubled).ranking.names == SELECTOR.select(request).ranking.names


@settings(max_examples=100, deadline=None)
@given(request_strategy())
def test_no_match_answers_only_always_keep(request: SearchRequest) -> None:
    outcome = SELECTOR.select(request)
    if outcome.ranking.no_match:
        assert set(outcome.ranking.names) <= set(request.always_keep)


@settings(max_examples=150, deadline=None)
@given(request_strategy(), st.data())
def test_a_pattern_naming_a_tool_ranks_it_first(
    request: SearchRequest, data: st.DataObject
) -> None:
    if not request.tools:
        return
    name = data.draw(st.sampled_from(request.tools)).name
    for pattern in (name, data.draw(cases)(name)):
        named = SearchRequest(pattern=pattern, tools=request.tools, top_k=request.top_k)
        first = SELECTOR.select(named).ranking.names[0]
        assert first == name if pattern == name else normalise_name(first) == normalise_name(name)


odd_patterns = st.text(min_size=1, max_size=30).filter(str.strip) | st.sampled_from(
    ["the of and", "!!! ???", "__", "天気 予報", "ÉCRIRE", "the", "a_b"]
)


@settings(max_examples=150, deadline=None)
@given(odd_patterns, st.lists(tools, max_size=12), st.integers(1, 30))
def test_any_pattern_gives_a_valid_answer_with_finite_scores(
    pattern: str, tool_list: list[Tool], top_k: int
) -> None:
    for selector in (SELECTOR, LEXICAL):
        request = SearchRequest(pattern=pattern, tools=tool_list, top_k=top_k)
        picked = selector.select(request).ranking.picked
        assert {p.name for p in picked} <= {t.name for t in tool_list}
        assert len({p.name for p in picked}) == len(picked) <= top_k
        assert all(math.isfinite(p.score) for p in picked)
