"""Hypothesis properties of the whole selection pipeline (fake encoder, real ranking)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.selector import Selector
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
names = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map("_".join)
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
