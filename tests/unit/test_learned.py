"""The learned column (``ranking.learned``): near patterns vote for the tools their model
called, by how near they are and how many words they share; a caller's share is capped."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tool_selector.ranking.fitted import LEARN
from tool_selector.ranking.learned import (
    SECONDS_PER_DAY,
    Called,
    Evidence,
    LearnRule,
    Shown,
    learned_scores,
    pattern_terms,
    tool_identity,
)

#: One near event is enough here and counts undamped (``lone`` as ``prior``), so each test
#: below shows one mechanism; the shipped rule (a lone call damped) has its own tests.
RULE = LearnRule(support=1.0)
NOW = 1_000_000.0
UNIT = np.eye(4, dtype=np.float32)
A, B, C = tool_identity("get_key", "Get a key"), tool_identity("get_secret", "Get a secret"), "c"
#: The catalog's tools in order: A, B, C; each tool's slot in the evidence below.


def event(
    vector: np.ndarray,
    text: str,
    called: tuple[str, ...],
    *,
    caller: str = "proxy",
    age_days: float = 0.0,
) -> Called:
    at = NOW - age_days * SECONDS_PER_DAY
    raw = vector.astype(np.float32).tobytes()
    search = Shown(
        "0" * 32, "scope", caller, at, raw, pattern_terms(text), (A, B, C), ("a", "b", "c")
    )
    return Called(search, called)


def scores(
    events: list[Called], text: str, vector: np.ndarray, rule: LearnRule = RULE
) -> list[float] | None:
    evidence = Evidence.of(events, rule, NOW)
    slots = np.asarray([evidence.tools.get(t, -1) for t in (A, B, C)], np.int64)
    got = learned_scores(evidence, vector, pattern_terms(text), slots, rule=rule, now=NOW)
    return None if got is None else got.round(4).tolist()


def test_a_near_pattern_votes_for_the_tool_its_model_called() -> None:
    got = scores([event(UNIT[0], "get the vault key", (A,))], "get the vault key", UNIT[0])
    assert got is not None
    assert got[0] > 0
    assert got[1] == got[2] <= 0.0


def test_a_tool_shown_and_not_called_sinks_by_the_negative_weight() -> None:
    events = [event(UNIT[0], "get the vault key", (A,))]
    plain = scores(events, "get the vault key", UNIT[0], replace(RULE, negative=0.0))
    negative = scores(events, "get the vault key", UNIT[0], replace(RULE, negative=1.0))
    assert plain is not None
    assert negative is not None
    assert plain[1] == 0.0
    assert negative[1] < 0 < negative[0] == plain[0]


@pytest.mark.parametrize(
    ("vector", "text"),
    [(UNIT[1], "get the vault key"), (UNIT[0], "book a flight to paris")],
    ids=["far in meaning", "no word shared"],
)
def test_an_unrelated_pattern_has_no_column(vector: np.ndarray, text: str) -> None:
    assert scores([event(UNIT[0], "get the vault key", (A,))], text, vector) is None


def test_the_pattern_sharing_more_words_weighs_more() -> None:
    events = [
        event(UNIT[0], "get the vault key value", (A,)),
        event(UNIT[0], "get the vault secret value", (B,)),
    ]
    got = scores(events, "get the vault secret", UNIT[0])
    assert got is not None
    assert got[1] > got[0]


def test_older_feedback_weighs_less_and_past_its_ttl_none() -> None:
    fresh = scores([event(UNIT[0], "get the vault key", (A,))], "get the vault key", UNIT[0])
    old = scores(
        [event(UNIT[0], "get the vault key", (A,), age_days=60)], "get the vault key", UNIT[0]
    )
    gone = scores(
        [event(UNIT[0], "get the vault key", (A,), age_days=RULE.keep.ttl + 1)],
        "get the vault key",
        UNIT[0],
    )
    assert fresh is not None
    assert old is not None
    assert 0 < old[0] < fresh[0]
    assert gone is None


def test_nothing_called_is_no_vote_for_any_tool() -> None:
    got = scores([event(UNIT[0], "get the vault key", ())], "get the vault key", UNIT[0])
    assert got is None or got[0] <= 0


def test_one_caller_fills_only_its_part_of_a_scope() -> None:
    """A flood of one caller's feedback keeps its newest ``per_caller``; the others' stay."""
    rule = replace(RULE, keep=replace(RULE.keep, per_caller=300))
    honest = [event(UNIT[0], "get the vault key", (A,), caller="proxy") for _ in range(200)]
    flood = [event(UNIT[0], "get the vault key", (B,), caller="mallory") for _ in range(4000)]
    evidence = Evidence.of(honest + flood, rule, NOW)
    b = evidence.tools[B]
    assert sum(1 for i in range(len(evidence)) if evidence.called[i].tolist() == [b]) == 300
    assert len(evidence) == 500
    got = scores(honest + flood, "get the vault key", UNIT[0], rule)
    assert got is not None
    assert got[1] < 1.0


def test_an_event_with_no_vector_leaves_the_others_their_votes() -> None:
    """An older version kept the feedback of a search answered while no model was loaded
    (no vector); the newest event set the evidence's width, so such an event left the
    scope with no event at all."""
    near = event(UNIT[0], "get the vault key", (A,), age_days=1)
    empty = event(np.zeros(0, np.float32), "get the vault key", (B,))
    alone = scores([near], "get the vault key", UNIT[0])
    assert alone is not None
    assert scores([near, empty], "get the vault key", UNIT[0]) == alone
    assert len(Evidence.of([near, empty], RULE, NOW)) == 1


def test_a_tool_never_shown_in_the_scope_has_no_slot() -> None:
    evidence = Evidence.of([event(UNIT[0], "get the vault key", (A,))], RULE, NOW)
    assert tool_identity("other", "") not in evidence.tools
    assert tool_identity("get_key", "Get a key") == A  # identity: name and description
    assert tool_identity("get_key", "Get a key, now with versions") != A


def test_at_the_shipped_rule_one_call_alone_weighs_at_most_a_third_and_two_near_all() -> None:
    """A single wrong call lifts a tool only so far: the service's rule damps a tool one
    near event alone called by a prior of 2 (its column at most 1/3); two calls count whole."""
    shipped = LEARN
    assert (shipped.support, shipped.lone, shipped.prior) == (1.0, 2.0, 0.1)
    one = [event(UNIT[0], "get the vault key", (B,))]
    got = scores(one, "get the vault key", UNIT[0], shipped)
    assert got is not None
    assert 0.0 < got[1] <= 1 / 3
    two = [*one, event(UNIT[0], "get the vault key", (B,), caller="other")]
    again = scores(two, "get the vault key", UNIT[0], shipped)
    assert again is not None
    assert again[1] > 0.9


def test_a_tool_one_near_event_called_is_damped_by_the_lone_prior() -> None:
    rule = replace(RULE, lone=2.0)
    one = [event(UNIT[0], "get the vault key", (A,))]
    two = [*one, event(UNIT[0], "get the vault key", (A,))]
    lone, plain = (
        scores(one, "get the vault key", UNIT[0], rule),
        scores(one, "get the vault key", UNIT[0]),
    )
    assert lone is not None
    assert plain is not None
    assert 0 < lone[0] < plain[0] / 2
    both = scores(two, "get the vault key", UNIT[0], rule)
    assert both == scores(two, "get the vault key", UNIT[0])  # two calls: ``prior`` alone


def test_in_one_evidence_a_lone_call_is_damped_and_a_tool_called_twice_is_not() -> None:
    rule = replace(RULE, lone=1.0)
    events = [
        event(UNIT[0], "get the vault key", (A,)),
        event(UNIT[0], "get the vault key", (A,)),
        event(UNIT[0], "get the vault key", (B,)),
    ]
    got = scores(events, "get the vault key", UNIT[0], rule)
    assert got is not None
    assert got[0] == pytest.approx(2 / 3.1, abs=1e-4)  # W + prior
    assert got[1] == pytest.approx(1 / 4.0, abs=1e-4)  # W + lone
