"""The learned arm's replay protocol (``offline.evaluation.learn.replay``), which the
in-process eval and the HTTP benchmark share, on a scripted service."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

from tool_selector.offline.evaluation.dataset import BenchQuery, Dataset, split_of
from tool_selector.offline.evaluation.learn import (
    FLOOD,
    TRAFFIC,
    Traffic,
    halves,
    replay,
    simulated_model,
)
from tool_selector_client.wire import Tool

NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "spare")


def dataset(n: int = 40) -> Dataset:
    """Queries wanting alpha (even) or beta (odd); no query wants ``spare``."""
    queries = tuple(BenchQuery(f"q{i}", f"request {i}", (NAMES[i % 2],)) for i in range(n))
    tools = tuple(Tool(name=n, description=f"the {n} tool") for n in NAMES)
    return Dataset("toy", tools, queries, Path("."))


class Scripted:
    """Shows the same five tools to every search; a measured query's scoped answer puts its
    gold first and shows ``spare``, its unscoped one has the gold fourth or fifth. Records
    every search's report and every measured question."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, str, list[str]]] = []
        self.answers: list[tuple[str, bool]] = []

    def search(self, text: str, caller: str, calls: Callable[[Sequence[str]], list[str]]) -> None:
        self.reports.append((text, caller, calls(NAMES[:5])))

    def answer(self, text: str, scoped: bool) -> Sequence[str]:
        self.answers.append((text, scoped))
        if not scoped:
            return ("gamma", "delta", "epsilon", "alpha", "beta")
        wanted = "alpha" if int(text.rsplit(maxsplit=1)[-1]) % 2 == 0 else "beta"
        return (wanted, "gamma", "delta", "epsilon", "spare")


def test_the_traffic_is_the_learned_half_and_the_measured_half_is_asked_both_ways() -> None:
    data, service = dataset(), Scripted()
    result = replay(service, data, "test", Traffic(0.0))
    learned, measured = halves(data.queries, "test")
    assert [text for text, _, _ in service.reports] == [q.text for q in learned]
    assert all(split_of(q.id) == "dev" for q in learned)
    assert service.answers == [(q.text, s) for q in measured for s in (False, True)]
    assert (result.before.percent(), result.after.percent()) == ((0.0, 100.0), (100.0, 100.0))
    assert result.learned_from == len(learned)


def test_a_model_never_wrong_calls_the_shown_gold_and_always_wrong_calls_another() -> None:
    rng = random.Random(1)
    assert simulated_model(("beta",), 0.0, rng)(NAMES[:5]) == ["beta"]
    assert simulated_model(("spare",), 0.0, rng)(NAMES[:5]) == []  # not shown: none
    wrong = simulated_model(("beta",), 1.0, rng)(NAMES[:5])
    assert len(wrong) == 1
    assert wrong[0] in NAMES[:5]
    assert wrong[0] != "beta"


def test_the_flood_reports_its_target_then_the_first_tool_as_another_caller() -> None:
    data, service = dataset(), Scripted()
    others = [BenchQuery("o1", "unrelated one", ("x",)), BenchQuery("o2", "unrelated two", ())]
    result = replay(service, data, "dev", Traffic(0.1, flood=3), others)
    flood = [(text, called) for text, who, called in service.reports if who == FLOOD]
    assert [text for text, _ in flood] == ["unrelated one"] * 2 + ["unrelated two"] * 2 + [
        "unrelated one"
    ] * 2
    assert {called[0] for _, called in flood[::2]} == {"spare"}  # no request of the set wants it
    assert all(called == ["alpha"] for _, called in flood[1::2])
    assert sum(who == TRAFFIC for _, who, _ in service.reports) == result.learned_from
    # the script shows the target in every scoped answer and in no other
    assert (result.before.target, result.after.target) == (0, result.after.queries)
