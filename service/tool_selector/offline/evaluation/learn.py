"""``tool-selector eval --learn``: the learned arm judged on traffic it did not learn from.

Each set is its own scope. Its traffic is replayed through the service's own path
(``Selector.select`` in the scope, ``Selector.remember``, ``Learner.feedback`` on a
``MemoryStore``, the scope's evidence reread every ``REFRESH_SEARCHES`` searches) with a
simulated model: it calls every gold tool the answer showed, except that a share of its
calls (``wrong``) go to another tool of the answer, and it calls nothing when no gold tool
was shown. Then the set's other queries are measured, R@1 and R@5, with the scope's
evidence and with none (the answer learning off gives):

- ``dev``: traffic is one half of the dev split (by id hash), the other half is measured:
  what the constants are chosen on;
- ``test``: traffic is the whole dev split, the test split is measured (never learned).

``--flood N`` adds a hostile caller to each run: N searches of other sets' requests, each
first reported as calling the flood's target tool (a tool of the catalog no request of the
set wants: where the search did not show it, the name moves nothing; where it did, it is a
call like any other), then as calling the search's own first tool (kept within the caller's
share, ``Keep.per_caller``). Its check: how many measured answers hold the target tool, with
the evidence and without.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from tool_selector.embeddings.encoder import Encoder
from tool_selector.learning.learner import Learner
from tool_selector.learning.store import Bounds, MemoryStore
from tool_selector.lru import BoundedLRU
from tool_selector.offline.evaluation.dataset import (
    BenchQuery,
    Dataset,
    Split,
    pick_queries,
    split_of,
)
from tool_selector.offline.evaluation.metrics import recall_at
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import Rules
from tool_selector.ranking.glossary import Glossary

#: The simulated traffic's caller and the flood's.
TRAFFIC, FLOOD = "traffic", "flood"
#: The replay's clock advances a second a search; the learner rereads a scope's evidence at
#: most every this many seconds, so a search reads the feedback of all but the last few.
REFRESH_SEARCHES = 20.0
_QUERY_VECTORS = 60_000


@dataclass(frozen=True, slots=True)
class Traffic:
    """How the simulated model behaves: ``wrong``, the share of calls that go to another
    tool of the answer; ``flood``: searches of the hostile caller (0: none)."""

    wrong: float = 0.1
    flood: int = 0

    @property
    def name(self) -> str:
        flood = f", flood {self.flood}" if self.flood else ""
        return f"{self.wrong:.0%} wrong{flood}"


@dataclass(slots=True)
class Recall:
    """Sums of R@1 and R@5 over the measured queries, and how many answers held the flood's
    target tool."""

    queries: int = 0
    r1: float = 0.0
    r5: float = 0.0
    target: int = 0

    def add(self, names: Sequence[str], gold: Sequence[str], target: str) -> None:
        self.queries += 1
        self.r1 += recall_at(names, gold, 1)
        self.r5 += recall_at(names, gold, 5)
        self.target += int(target in names)

    def percent(self) -> tuple[float, float]:
        n = max(self.queries, 1)
        return round(100 * self.r1 / n, 1), round(100 * self.r5 / n, 1)


@dataclass(slots=True)
class SetResult:
    """One set under one traffic: R@k without and with the learned evidence."""

    dataset: str
    split: Split
    traffic: Traffic
    learned_from: int
    before: Recall = field(default_factory=Recall)
    after: Recall = field(default_factory=Recall)

    def as_dict(self) -> dict[str, Any]:
        (b1, b5), (a1, a5) = self.before.percent(), self.after.percent()
        return {
            "dataset": self.dataset,
            "split": self.split,
            "traffic": self.traffic.name,
            "learned_from": self.learned_from,
            "measured": self.before.queries,
            "r1": [b1, a1],
            "r5": [b5, a5],
            "flood_target_answers": [self.before.target, self.after.target],
        }


def sampled(datasets: Sequence[Dataset], limit: int | None) -> list[Dataset]:
    """At most ``limit`` queries of each set, of every split (``pick_queries``): the traffic
    and the measured queries both come from the sample."""
    if not limit:
        return list(datasets)
    return [replace(d, queries=tuple(pick_queries(d.queries, "all", limit))) for d in datasets]


def halves(
    queries: Sequence[BenchQuery], split: Split
) -> tuple[list[BenchQuery], list[BenchQuery]]:
    """``split``'s traffic and its measured queries (the module), each with gold tools."""
    gold = [q for q in queries if q.gold]
    dev = [q for q in gold if split_of(q.id) == "dev"]
    if split == "test":
        return dev, [q for q in gold if split_of(q.id) == "test"]
    measured = {q.id for q in dev if hashlib.sha256(f"learn:{q.id}".encode()).digest()[0] % 2}
    return [q for q in dev if q.id not in measured], [q for q in dev if q.id in measured]


class LearnEval:
    """Replays and measures sets (the module) with one selector of ``rules``: each set's
    catalog embedded once, each query encoded once, a fresh learner a run (``learning``)."""

    def __init__(
        self, encoder: Encoder, rules: Rules, *, glossary: Glossary | None = None, k: int = 5
    ) -> None:
        self.rules, self.k = rules, k
        self.selector = Selector(
            encoder,
            rules=rules,
            catalogs=CatalogStore(100_000),
            queries=BoundedLRU(_QUERY_VECTORS),
            embed_deadline=math.inf,
            glossary=glossary,
        )

    def run(
        self, data: Dataset, split: Split, traffic: Traffic, others: Sequence[BenchQuery] = ()
    ) -> SetResult:
        """Replay ``data``'s traffic of ``split`` (and the flood, of ``others``' requests),
        then measure its other queries with the evidence and without."""
        return replay(_Replay.of(self, data), data, split, traffic, others)


class Service(Protocol):
    """Where a replay searches: in process (``_Replay``) or over HTTP (``loadtests.learn_http``)."""

    def search(self, text: str, caller: str, calls: Callable[[Sequence[str]], list[str]]) -> None:
        """Search ``text`` in the set's scope as ``caller`` and report ``calls(answer)``."""

    def answer(self, text: str, scoped: bool) -> Sequence[str]:
        """The names answered to ``text``: in the set's scope, or in none (no evidence)."""


def replay(
    service: Service,
    data: Dataset,
    split: Split,
    traffic: Traffic,
    others: Sequence[BenchQuery] = (),
) -> SetResult:
    """The protocol (the module) on ``service``: ``data``'s traffic of ``split`` and the
    flood (``others``' requests), then its measured queries with the evidence and without."""
    learned, measured = halves(data.queries, split)
    rng = random.Random(f"{data.name}:{split}:{traffic.wrong}")  # noqa: S311 - a simulation
    target = flood_target(data, rng)
    for q in learned:
        service.search(q.text, TRAFFIC, simulated_model(q.gold, traffic.wrong, rng))
    for text in itertools.islice(itertools.cycle([q.text for q in others]), traffic.flood):
        service.search(text, FLOOD, lambda _: [target])
        service.search(text, FLOOD, lambda shown: list(shown[:1]))
    result = SetResult(data.name, split, traffic, len(learned))
    for q in measured:
        result.before.add(service.answer(q.text, scoped=False), q.gold, target)
        result.after.add(service.answer(q.text, scoped=True), q.gold, target)
    return result


@dataclass(slots=True)
class _Replay:
    """One set's searches in its own scope, each remembered and given the model's feedback,
    on a clock that advances a second a search."""

    selector: Selector
    learner: Learner
    tools: ToolSource
    scope: str
    clock: _Clock
    ids: Iterator[int] = field(default_factory=itertools.count)

    @classmethod
    def of(cls, run: LearnEval, data: Dataset) -> _Replay:
        clock = _Clock()
        store = MemoryStore(Bounds(ttl=86_400.0, max_searches=200_000, max_events=50_000), clock)
        learner = Learner(store, run.rules.learn, refresh=REFRESH_SEARCHES, clock=clock)
        run.selector.learning = learner  # this set's scope alone: a fresh learner a run
        tools = ToolSource.of(list(data.tools))
        return cls(run.selector, learner, tools, data.name, clock, k=run.k)

    k: int = 5

    def search(self, text: str, caller: str, calls: Callable[[Sequence[str]], list[str]]) -> None:
        self.clock.now += 1.0
        ask = Ask(pattern=text, tools=self.tools, top_k=5, scope=self.scope)
        outcome = self.selector.select(ask)
        sid = f"{next(self.ids):032x}"
        self.selector.remember(sid, ask, outcome, caller)
        self.learner.feedback(sid, calls(outcome.ranking.names))

    def answer(self, text: str, scoped: bool) -> Sequence[str]:
        ask = Ask(
            pattern=text, tools=self.tools, top_k=self.k, scope=self.scope if scoped else None
        )
        return self.selector.select(ask).ranking.names


def simulated_model(
    gold: Sequence[str], wrong: float, rng: random.Random
) -> Callable[[Sequence[str]], list[str]]:
    """The simulated model (the module): every shown gold tool, or with ``wrong`` odds
    another tool of the answer; nothing when no gold tool was shown."""

    def calls(shown: Sequence[str]) -> list[str]:
        others = [n for n in shown if n not in gold]
        if others and rng.random() < wrong:
            return [rng.choice(others)]
        return [n for n in shown if n in gold]

    return calls


def flood_target(data: Dataset, rng: random.Random) -> str:
    """The flood's target: a tool of the catalog no request of the set wants."""
    wanted = {g for q in data.queries for g in q.gold}
    spare = sorted(t.name for t in data.tools if t.name not in wanted)
    return rng.choice(spare or sorted(t.name for t in data.tools))


class _Clock:
    """Seconds since the epoch of the replay (the learner's, the store's, the arm's decay
    read wall time: an event from the replay's future is as fresh as one now)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def table(results: Sequence[SetResult]) -> str:
    """The markdown table: per set and traffic, R@1 and R@5 without -> with the evidence."""
    lines = [
        "| set | split | traffic | learned from | measured | R@1 | R@5 | flood target in answers |",
        "|---|---|---|---:|---:|---|---|---|",
    ]
    for r in results:
        (b1, b5), (a1, a5) = r.before.percent(), r.after.percent()
        lines.append(
            f"| {r.dataset} | {r.split} | {r.traffic.name} | {r.learned_from} "
            f"| {r.before.queries} | {b1} -> {a1} | {b5} -> {a5} "
            f"| {r.before.target} -> {r.after.target} |"
        )
    return "\n".join(lines)


def replay_all(
    run: LearnEval,
    datasets: Sequence[Dataset],
    split: Split,
    traffics: Sequence[Traffic],
    progress: Callable[[str], None] = lambda _: None,
) -> list[SetResult]:
    """Every set under every traffic; a flood's requests come from the other sets."""
    results = []
    for data in datasets:
        others = [q for d in datasets if d.name != data.name for q in d.queries][:2_000]
        for traffic in traffics:
            started = time.perf_counter()
            results.append(run.run(data, split, traffic, others))
            progress(f"{data.name} {split} {traffic.name}: {time.perf_counter() - started:.0f} s")
    return results
