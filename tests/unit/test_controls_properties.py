"""The caller's controls as a contract: for random catalogs, filters, budgets and
``always_keep``, no answer leaks a filtered-out tool or exceeds the budget (hypothesis;
fake encoder and the lexical path, real ranking)."""

import math

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.pipeline.selector import Selector
from tool_selector_client.policy import glob_matcher, name_matches
from tool_selector_client.wire import Budget, Filters, SearchRequest, Tool

WORDS = ["send", "message", "slack", "file", "read", "issue", "create", "delete", "list", "user"]
PREFIXES = ["", "mcp__github__", "github.", "slack_"]
names = st.builds(
    lambda prefix, words: prefix + "_".join(words),
    st.sampled_from(PREFIXES),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
annotations = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={"readOnlyHint": st.booleans(), "destructiveHint": st.booleans()},
    ),
)


@st.composite
def tools(draw: st.DrawFn) -> Tool:
    name = draw(names)
    description = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=12)))
    definition: dict[str, object] = {"name": name, "description": description}
    hints = draw(annotations)
    if hints is not None:
        definition["annotations"] = hints
    return Tool(name=name, definition=definition, safe=draw(st.sampled_from([None, True, False])))


globs = st.lists(
    st.sampled_from(["github_*", "*delete*", "slack_*", "*__*", "read*", "*file", "create_?ssue"]),
    max_size=3,
)
filters = st.builds(
    Filters,
    allow=st.one_of(st.none(), globs),
    deny=globs,
    read_only=st.booleans(),
    exclude_destructive=st.booleans(),
    allow_unsafe=st.booleans(),
)
budgets = st.one_of(
    st.none(),
    st.builds(
        Budget,
        max_bytes=st.one_of(st.none(), st.integers(0, 600)),
        max_tools=st.one_of(st.none(), st.integers(1, 6)),
    ),
)


@st.composite
def requests(draw: st.DrawFn) -> SearchRequest:
    catalog = draw(st.lists(tools(), max_size=20))
    pattern_words = [*WORDS, *(t.name for t in catalog)]
    return SearchRequest(
        pattern=" ".join(draw(st.lists(st.sampled_from(pattern_words), min_size=1, max_size=4))),
        tools=catalog,
        top_k=draw(st.integers(1, 8)),
        always_keep=draw(st.lists(st.sampled_from([*(t.name for t in catalog), "x"]), max_size=4)),
        filters=draw(filters),
        budget=draw(budgets),
        min_score=draw(st.one_of(st.none(), st.floats(0.0, 1.0))),
    )


SELECTORS = [
    Selector(encoder=HashingEncoder(), cache=MemoryCache(1 << 20), embed_deadline=math.inf),
    Selector(encoder=None),
]


def _hints(tool: Tool) -> dict[str, object]:
    found = (tool.definition or {}).get("annotations")
    return found if isinstance(found, dict) else {}


def _matches(globs: list[str], name: str) -> bool:
    return name_matches(glob_matcher(globs), name)


def _first(request: SearchRequest) -> dict[str, Tool]:
    out: dict[str, Tool] = {}
    for tool in request.tools:
        out.setdefault(tool.name, tool)
    return out


@settings(max_examples=200, deadline=None)
@given(requests(), st.sampled_from(SELECTORS))
def test_no_filtered_tool_is_ever_returned(request: SearchRequest, selector: Selector) -> None:
    got = selector.select(request).ranking.names
    f = request.filters
    assert f is not None
    by_name = _first(request)
    for name in got:
        tool, hints = by_name[name], _hints(by_name[name])
        assert not _matches(f.deny, name)
        assert f.allow is None or _matches(f.allow, name)
        assert f.allow_unsafe or tool.safe is not False
        assert not f.read_only or hints.get("readOnlyHint") is True
        destructive = (
            hints.get("readOnlyHint") is not True and hints.get("destructiveHint") is not False
        )
        assert not (f.exclude_destructive and destructive)


@settings(max_examples=200, deadline=None)
@given(requests(), st.sampled_from(SELECTORS))
def test_answer_fits_the_budget(request: SearchRequest, selector: Selector) -> None:
    got = selector.select(request).ranking.names
    budget = request.budget or Budget()
    by_name = _first(request)
    size = sum(len(msgspec.json.encode(by_name[n].definition)) for n in got)
    assert budget.max_bytes is None or size <= budget.max_bytes
    assert len(got) <= min(request.top_k, budget.max_tools or request.top_k)
    assert len(got) == len(set(got))
    assert set(got) <= set(by_name)


@settings(max_examples=150, deadline=None)
@given(requests(), st.sampled_from(SELECTORS))
def test_min_score_keeps_only_sure_tools_besides_always_keep(
    request: SearchRequest, selector: Selector
) -> None:
    picked = selector.select(request).ranking.picked
    floor = request.min_score
    for p in picked:
        assert floor is None or p.reason == "always_keep" or p.relevance >= round(floor, 4) - 1e-4


def test_globs_match_full_and_bare_names_case_insensitively() -> None:
    assert _matches(["create_issue"], "mcp__github__create_issue")
    assert _matches(["GITHUB_*"], "github_create_issue")
    assert not _matches(["github_*"], "mcp__slack__send")
