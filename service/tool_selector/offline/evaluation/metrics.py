"""Retrieval metrics at a cutoff k, for one ranked list against a set of gold names.

- ``recall_at(k)``: share of gold names among the first k (Recall@k).
- ``complete_at(k)``: 1 when every gold name is among the first k, else 0.
- ``ndcg_at(k)``: binary-gain NDCG, ``DCG = sum 1/log2(rank + 1)`` over gold hits in the first
  k, divided by the DCG of an ideal list (all gold first, at most k of them).
- ``reciprocal_rank``: ``1 / rank`` of the first gold name anywhere in the list, else 0 (MRR
  when averaged). Every ranker in ``tool-selector eval`` returns at most k names, so the
  reported ``mrr`` is MRR@k.

A query with no gold names is a need no tool serves: it counts toward ``abstain%`` (share
answered with nothing) and never toward recall, which averages over real needs only;
``empty%`` is the share of real needs answered with nothing.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any


def recall_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Share of ``gold`` found in ``ranked[:k]``."""
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def complete_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when all of ``gold`` is in ``ranked[:k]``."""
    return 1.0 if gold and set(gold) <= set(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Binary-relevance NDCG@k."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 2) for r, name in enumerate(ranked[:k]) if name in wanted)
    ideal = sum(1.0 / math.log2(r + 2) for r in range(min(k, len(wanted))))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], gold: Collection[str]) -> float:
    """``1 / rank`` of the first gold name in ``ranked`` (0 if none)."""
    wanted = set(gold)
    return next((1.0 / (r + 1) for r, name in enumerate(ranked) if name in wanted), 0.0)


@dataclass(slots=True)
class MetricSums:
    """Running sums of the per-query metrics of one ranker; ``summary()`` gives the means."""

    k: int = 5
    queries: int = 0
    empty: int = 0
    no_match: int = 0
    abstained: int = 0
    seconds: float = 0.0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, ranked: Sequence[str], gold: Collection[str], seconds: float = 0.0) -> None:
        """Account one query's ranked answer and the time it took (no gold: a no-match query)."""
        self.seconds += seconds
        if not gold:
            self.no_match += 1
            self.abstained += not ranked
            return
        values = {
            "r@1": recall_at(ranked, gold, 1),
            f"r@{self.k}": recall_at(ranked, gold, self.k),
            f"ndcg@{self.k}": ndcg_at(ranked, gold, self.k),
            "mrr": reciprocal_rank(ranked, gold),
            f"complete@{self.k}": complete_at(ranked, gold, self.k),
        }
        for key, value in values.items():
            self.sums[key] = self.sums.get(key, 0.0) + value
        self.queries += 1
        self.empty += not ranked

    def summary(self) -> dict[str, float]:
        """Means over real needs in percent, ``empty%``, ``abstain%`` (when there were
        no-match queries) and ``ms/query`` (over every query)."""
        n = max(self.queries, 1)
        out = {key: round(100 * value / n, 1) for key, value in self.sums.items()}
        out["empty%"] = round(100 * self.empty / n, 1)
        if self.no_match:
            out["abstain%"] = round(100 * self.abstained / self.no_match, 1)
        out["ms/query"] = round(1000 * self.seconds / max(self.queries + self.no_match, 1), 2)
        return out


@dataclass(slots=True)
class Scoreboard:
    """``MetricSums`` per ranker, over all queries and per query category."""

    k: int = 5
    overall: dict[str, MetricSums] = field(default_factory=dict)
    by_category: dict[str, dict[str, MetricSums]] = field(default_factory=dict)

    def add(
        self,
        ranker: str,
        category: str,
        ranked: Sequence[str],
        gold: Collection[str],
        seconds: float,
    ) -> None:
        """Account one ranker's answer to one query, overall and under its category."""
        for table in (self.overall, self.by_category.setdefault(category, {})):
            table.setdefault(ranker, MetricSums(k=self.k)).add(ranked, gold, seconds)

    def summary(self) -> dict[str, dict[str, float]]:
        """Each ranker's overall summary."""
        return {name: sums.summary() for name, sums in self.overall.items()}

    def categories(self) -> dict[str, dict[str, Any]]:
        """Per category (sorted): real needs, no-match queries and each ranker's summary."""
        out: dict[str, dict[str, Any]] = {}
        for category in sorted(self.by_category):
            table = self.by_category[category]
            first = next(iter(table.values()))
            out[category] = {
                "queries": first.queries,
                "no_match": first.no_match,
                "rankers": {name: sums.summary() for name, sums in table.items()},
            }
        return out
