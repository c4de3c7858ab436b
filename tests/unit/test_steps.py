"""Multi-step tasks by their steps: the clause splitter, the merge, and ``rank`` with both."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import HashingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.ranking.steps import StepRule, clauses, interleave
from tool_selector_client.wire import Budget, Filters, SearchRequest, Tool


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("send a slack message", ()),
        ("search the web for pizza places", ()),
        (
            "Find the latest invoice. Email it to the accountant.",
            ("Find the latest invoice.", "Email it to the accountant."),
        ),
        (
            "look up the weather in Paris; book a table for two",
            ("look up the weather in Paris", "book a table for two"),
        ),
        (
            "search the web for pizza places and then book a table for two",
            ("search the web for pizza places", "book a table for two"),
        ),
        (
            "create the shipment, then check the warehouse space, finally refund the order",
            ("create the shipment", "check the warehouse space", "refund the order"),
        ),
        (
            "First, list the open issues, then close the stale ones",
            ("list the open issues", "close the stale ones"),
        ),
        (
            "Steps: 1. open the config file 2. read its contents 3) send it to slack",
            ("open the config file", "read its contents", "send it to slack"),
        ),
        (
            "fetch the sales report\ncompute the monthly totals\nplot a bar chart",
            ("fetch the sales report", "compute the monthly totals", "plot a bar chart"),
        ),
        (
            "Create the invoice for the order. Additionally, notify the customer by email.",
            ("Create the invoice for the order.", "notify the customer by email."),
        ),
        ("Help me find Mr. Lu's resume and save it to cv.md", ()),
        ("Show me pictures of cats, e.g. tabbies or siamese ones", ()),
        ("The temperature is 24.7 degrees Celsius, store it", ()),
        ("Do it. Now. Please send the weekly report", ()),
        ("Find the file. Read it.", ()),
    ],
    ids=[
        "keywords",
        "one sentence",
        "two sentences",
        "semicolon",
        "and then",
        "comma then, comma finally",
        "first ... then",
        "numbered steps",
        "lines",
        "sequence word after a sentence end",
        "Mr. ends no sentence",
        "e.g. ends no sentence",
        "a decimal point ends no sentence",
        "pieces under three words are no step",
        "two-word sentences are no steps",
    ],
)
def test_clauses(pattern: str, expected: tuple[str, ...]) -> None:
    assert clauses(pattern) == expected


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (StepRule(min_clauses=3), 0),
        (StepRule(min_clauses=2), 2),
        (StepRule(min_words=6), 0),
        (StepRule(max_clauses=1, min_clauses=1), 1),
    ],
    ids=["three needed", "two needed", "long words needed", "first clause only"],
)
def test_the_rule_decides_what_is_a_multi_step_task(rule: StepRule, expected: int) -> None:
    assert len(clauses("Find the latest invoice. Email it to the accountant.", rule)) == expected


def test_the_shipped_rule_splits_long_tasks_only() -> None:
    """Under 250 characters a few sentences are one need (Arcade's "Create a task for John
    ... Label it with 'Project XYZ'."); a task of 250 or more is split as any rule splits it."""
    short = "Create a task for John. It should be due on 2025-06-30. Label it with 'XYZ'."
    assert clauses(short)
    assert not clauses(short, SHIPPED_STEPS)
    long = (
        "First, I need to book a hotel room in Paris for 5 nights starting from 20th June "
        "with a gym and free breakfast. Secondly, I am curious about the last match played "
        "by the soccer club Manchester United. Lastly, calculate my BMI: I weigh 75 kilograms "
        "and I am 180 centimetres tall."
    )
    assert len(long) >= SHIPPED_STEPS.min_chars
    assert clauses(long, SHIPPED_STEPS) == clauses(long)
    assert len(clauses(long)) == 3


def perm(*items: int) -> np.ndarray:
    return np.array(items, dtype=np.intp)


EVERY = np.ones(6, dtype=bool)


@pytest.mark.parametrize(
    ("lists", "eligible", "depth", "expected"),
    [
        ([], EVERY, 5, [0, 1, 2, 3, 4, 5]),
        ([perm(5, 4, 3, 2, 1, 0)], EVERY, 4, [0, 5, 1, 4, 2, 3]),
        ([perm(5, 4, 3, 2, 1, 0), perm(4, 0, 1, 2, 3, 5)], EVERY, 5, [0, 5, 4, 1, 2, 3]),
        ([perm(0, 1, 2, 3, 4, 5)], EVERY, 3, [0, 1, 2, 3, 4, 5]),
        ([perm(5, 4, 3, 2, 1, 0)], np.array([0, 1, 1, 1, 1, 0], bool), 3, [1, 4, 2, 0, 3, 5]),
        ([perm(5, 4, 3, 2, 1, 0)], EVERY, 0, [0, 1, 2, 3, 4, 5]),
    ],
    ids=[
        "no clause",
        "one clause",
        "two clauses",
        "a clause that agrees",
        "ineligible tools leave the head",
        "depth 0",
    ],
)
def test_interleave(
    lists: list[np.ndarray], eligible: np.ndarray, depth: int, expected: list[int]
) -> None:
    assert interleave(perm(0, 1, 2, 3, 4, 5), lists, eligible, depth).tolist() == expected


@pytest.mark.parametrize(
    ("reach", "expected"),
    [
        (0, [0, 5, 1, 4, 2, 3]),  # any tool of the clause joins
        (4, [0, 3, 1, 2, 4, 5]),  # 5 and 4 are not among the whole order's first four
        (1, [0, 1, 2, 3, 4, 5]),  # only the whole order's first: nothing to merge
    ],
    ids=["any", "first four", "first only"],
)
def test_interleave_takes_clause_tools_within_reach(reach: int, expected: list[int]) -> None:
    whole, clause = perm(0, 1, 2, 3, 4, 5), perm(5, 4, 3, 2, 1, 0)
    assert interleave(whole, [clause], EVERY, 4, reach).tolist() == expected


orders = st.permutations(list(range(8))).map(lambda p: np.array(p, dtype=np.intp))


@settings(max_examples=200, deadline=None)
@given(
    orders,
    st.lists(orders, max_size=4),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.integers(0, 8),
)
def test_interleave_is_a_permutation_keeping_the_first_eligible_tool_first(
    whole: np.ndarray, lists: list[np.ndarray], eligible: list[bool], depth: int
) -> None:
    mask = np.array(eligible, dtype=bool)
    out = interleave(whole, lists, mask, depth)
    assert sorted(out.tolist()) == list(range(8))
    first = [int(i) for i in whole if mask[i]]
    if first:
        assert next(int(i) for i in out if mask[i]) == first[0]
    assert interleave(whole, lists, mask, depth).tolist() == out.tolist()


TOOLS = [
    Tool(name="create_shipment", description="Create a shipment from a sender to a recipient"),
    Tool(name="ship_parcel", description="Create a parcel shipment label for a sender"),
    Tool(name="shipment_status", description="Track the status of a shipment"),
    Tool(name="warehouse_space", description="Check available space in the warehouse"),
    Tool(name="refund_order", description="Initiate a refund for an order by its id"),
    Tool(name="cancel_shipment", description="Cancel a shipment before it leaves"),
    Tool(name="order_details", description="Retrieve the details of an order"),
    Tool(name="send_email", description="Send an email message to a recipient"),
]
TASK = (
    "Create a shipment with a parcel shipment label for the shipment sender Emma and the "
    "shipment recipient Daniel, and track the shipment status. Then check the space in the "
    "warehouse. Finally, initiate a refund for order ord123 that the customer returned."
)


def selector(rule: StepRule | None = None, encoder: HashingEncoder | None = None) -> Selector:
    return Selector(
        encoder=encoder or HashingEncoder(),
        cache=MemoryCache(1 << 20),
        queries=BoundedLRU(100),
        embed_deadline=math.inf,
        rules=Rules(steps=rule),
    )


WHOLE, STEPS = selector(), selector(StepRule())


def names(sel: Selector, **fields: object) -> list[str]:
    request = SearchRequest(pattern=TASK, tools=TOOLS, **fields)  # type: ignore[arg-type]
    return sel.select(request).ranking.names


def test_each_step_gets_its_tool_and_the_first_tool_stays_first() -> None:
    whole, steps = names(WHOLE, top_k=4), names(STEPS, top_k=4)
    assert steps[0] == whole[0] == "create_shipment"
    assert "refund_order" in steps
    assert "refund_order" not in whole  # the loudest step's variants fill the whole's list


def test_the_clauses_are_encoded_once_in_one_batch_then_cached() -> None:
    encoder = HashingEncoder()
    sel = selector(StepRule(), encoder)
    names(sel)
    assert encoder.calls == [8, 1, 3]  # the tools, the whole pattern, its three clauses together
    names(sel)
    assert encoder.calls == [8, 1, 3]


def test_whole_cosines_encode_no_clause() -> None:
    encoder = HashingEncoder()
    names(selector(StepRule(own_vectors=False), encoder))
    assert encoder.calls == [8, 1]


def test_the_shipped_rule_merges_a_long_task_without_an_encode() -> None:
    """``SHIPPED_STEPS``: the task (250 characters and more) gets its warehouse step's tool
    into a list of three, from the whole pattern's cosines; no clause is encoded."""
    encoder = HashingEncoder()
    assert len(TASK) >= SHIPPED_STEPS.min_chars
    steps, whole = names(selector(SHIPPED_STEPS, encoder), top_k=3), names(WHOLE, top_k=3)
    assert steps[0] == whole[0]
    assert "warehouse_space" in steps
    assert "warehouse_space" not in whole
    assert encoder.calls == [8, 1]


def test_words_only_clauses_read_no_cosine() -> None:
    """``words_only``: each clause ranked by its words (no cosines, no encode); the merge
    still holds the whole pattern's first tool first."""
    encoder = HashingEncoder()
    sel = selector(StepRule(words_only=True), encoder)
    request = SearchRequest(pattern=TASK, tools=TOOLS, top_k=4)
    outcome = sel.select(request)
    assert encoder.calls == [8, 1]
    assert outcome.ranking.names[0] == names(WHOLE, top_k=4)[0]
    assert outcome.ranking.names != names(WHOLE, top_k=4)


@pytest.mark.parametrize(
    ("fields", "check"),
    [
        ({"top_k": 2}, lambda out: len(out) <= 2),
        ({"always_keep": ["send_email"]}, lambda out: "send_email" in out),
        (
            {"filters": Filters(deny=["refund_*"])},
            lambda out: "refund_order" not in out,
        ),
        ({"budget": Budget(max_tools=2)}, lambda out: len(out) <= 2),
        ({"min_score": 1.0}, lambda out: out == []),
    ],
    ids=["top_k", "always_keep", "filters", "budget", "min_score"],
)
def test_the_callers_controls_still_hold(fields: dict[str, object], check: object) -> None:
    out = names(STEPS, **fields)
    assert check(out)  # type: ignore[operator]
    assert len(out) == len(set(out))


def test_a_pattern_naming_a_tool_exactly_ranks_it_first() -> None:
    request = SearchRequest(pattern="Refund_Order", tools=TOOLS)
    assert STEPS.select(request).ranking.names[0] == "refund_order"


def test_the_lexical_path_merges_the_steps_too() -> None:
    lexical = Selector(encoder=None, rules=Rules(steps=StepRule()))
    out = lexical.select(SearchRequest(pattern=TASK, tools=TOOLS, top_k=3)).ranking.names
    plain = Selector(encoder=None).select(SearchRequest(pattern=TASK, tools=TOOLS, top_k=3))
    assert out[0] == plain.ranking.names[0]
    assert "warehouse_space" in out


WORDS = ["send", "message", "slack", "file", "read", "issue", "create", "weather", "order"]
clause_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
step_patterns = st.lists(clause_text, min_size=1, max_size=4).flatmap(
    lambda parts: st.sampled_from([". ", ", then ", "\n", "; "]).map(lambda sep: sep.join(parts))
)
step_tools = st.lists(
    st.builds(
        Tool,
        name=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map("_".join),
        description=st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join),
    ),
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(step_patterns, step_tools, st.integers(1, 8), st.lists(st.sampled_from(WORDS), max_size=2))
def test_steps_keep_the_first_tool_and_every_answer_rule(
    pattern: str, tools: list[Tool], top_k: int, keep: list[str]
) -> None:
    request = SearchRequest(pattern=pattern, tools=tools, top_k=top_k, always_keep=keep)
    out = STEPS.select(request).ranking.names
    plain = WHOLE.select(request).ranking.names
    assert set(out) <= {t.name for t in tools}
    assert len(out) == len(set(out)) <= top_k
    assert out[:1] == plain[:1]
    kept = set(keep) & {t.name for t in tools}  # they count toward top_k, so as many fit
    assert len(kept & set(out)) == min(len(kept), top_k)
    assert STEPS.select(request).ranking.names == out
