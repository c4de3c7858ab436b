"""Multi-step tasks ranked by their steps: a pattern's clauses, and their lists merged.

A task of several steps ("create the shipment, then check the warehouse space, finally
refund the order") needs a tool per step, but the whole pattern's top tools are variants of
its loudest step. So a pattern of ``MIN_CLAUSES`` or more clauses (``clauses``) is also
ranked clause by clause (each clause's own BM25, name and specificity signals and its own
cosines, fused with the same weights: ``ranker.rank``), and the order is merged
(``interleave``): the whole pattern's first tool, then each clause's first, then the whole
pattern's second and each clause's second, ... until ``top_k`` tools, then the rest of the
whole pattern's order. The whole pattern's first tool stays first, so R@1 never moves;
Seal-Tools' multi-step instructions gain R@5 (docs/quality.md, "Multi-step tasks").

A clause is cut at sentence ends (not after "Mr." or "e.g."), ``;``, line breaks, numbered
steps ("1." "2)"), "then" ("and then", ", then"), and sequence words after a comma or
a sentence end ("finally", "lastly", "next", "after that", "additionally"); a clause needs
``MIN_WORDS`` words (a cut that leaves "Help me find Mr." is no step).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.intp]

#: Fewest clauses that make a pattern a multi-step task.
MIN_CLAUSES = 2
#: Fewest words of a clause (shorter pieces join no list).
MIN_WORDS = 3
#: Most clauses ranked: the first ones (a pasted list of twenty lines is not twenty steps).
MAX_CLAUSES = 6

#: Words whose dot ends no sentence (each a fixed-width look-behind, so one per word).
_ABBREVIATIONS = "".join(
    rf"(?<!\b{re.escape(word)})"
    for word in (
        "Mr.",
        "Mrs.",
        "Ms.",
        "Dr.",
        "St.",
        "vs.",
        "etc.",
        "e.g.",
        "i.e.",
        "No.",
        "approx.",
    )
)
_SEQUENCE = r"(?:finally|lastly|next|after\s+that|afterwards|additionally|then)\b"
#: Where clauses are cut. A cut that starts with blanks is tried only where a run of blanks
#: starts (``(?<!\s)``), not again from each of its blanks (each try reads to the run's end:
#: the square of its length). It cuts the same: such a cut found inside a run is found at
#: the run's start too, and no cut ends inside a run (tests/unit/test_blank_runs_linear.py).
CUT = re.compile(
    # a sentence end (not an abbreviation's dot, not a decimal point) or ';'
    rf"{_ABBREVIATIONS}(?<=[.!?;])\s+"
    r"|(?<!\s)\s*\n+\s*"  # a line break
    r"|(?<!\s)\s+(?:and\s+)?then\s+"  # "then", "and then"
    rf"|,\s*(?:and\s+)?(?={_SEQUENCE})"  # ", finally ...", ", and next ..."
    r"|(?<=[:,])\s*(?=\d{1,2}[.)]\s)"  # numbered: "1. " "2) "
    r"|(?<!\s)\s+(?=\d{1,2}[.)]\s+\D)",
    re.IGNORECASE,
)
#: What a clause may start with that names no step: its number, "then", "finally", ...
_LEAD = re.compile(
    rf"^(?:\d{{1,2}}[.)]\s*|(?:and\s+)?(?:{_SEQUENCE}|first(?:ly)?\b|second(?:ly)?\b)[,:]?\s*)+",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class StepRule:
    """When a pattern is a multi-step task: ``min_chars`` characters and ``min_clauses``
    clauses of ``min_words`` words at least; the first ``max_clauses`` of them are ranked,
    each with its own vector (``own_vectors``: one encode per clause) or the whole pattern's
    cosines; ``words_only``: by its words alone (BM25, specificity, names; no cosines, no
    encode). ``in_context``: a clause's cosines are the mean of the whole pattern's and its
    own vector's, read from the whole pattern's forward pass (``SpanEncoder``: its tokens'
    states, no further encode). ``reach``: a clause's tool joins the merge only when it is
    among the whole order's first ``reach`` tools the answer may hold (0: any tool).
    ``context_share``: a clause's own cosines' share in its cosines under ``in_context``
    (the rest: the whole pattern's). The rule the service ships: ``fitted.SHIPPED_STEPS``."""

    min_clauses: int = MIN_CLAUSES
    min_words: int = MIN_WORDS
    max_clauses: int = MAX_CLAUSES
    own_vectors: bool = True
    min_chars: int = 0
    reach: int = 0
    words_only: bool = False
    in_context: bool = False
    context_share: float = 0.5


def cut_clauses(pattern: str) -> list[str]:
    """The pattern cut where ``CUT`` cuts, each piece without the blanks, commas and
    semicolons around it nor what it starts with that names no step (its number, "then",
    "finally", ...); a piece may be left empty. ``clauses`` keeps the steps among them."""
    return [_LEAD.sub("", p.strip(" ,;")) for p in CUT.split(pattern) if p]


def clauses(pattern: str, rule: StepRule | None = None) -> tuple[str, ...]:
    """The pattern's steps (``rule``), or ``()`` when it has fewer than ``min_clauses``
    (a pattern of one step is ranked whole)."""
    rule = StepRule() if rule is None else rule
    if len(pattern) < rule.min_chars:
        return ()
    kept = [p for p in cut_clauses(pattern) if len(p.split()) >= rule.min_words]
    return tuple(kept[: rule.max_clauses]) if len(kept) >= rule.min_clauses else ()


def locate(pattern: str, steps: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Each clause's character span in ``pattern`` (``clauses`` cuts, strips and drops a
    lead, so each is a piece of it, in order); ``(0, 0)`` for one not found."""
    spans: list[tuple[int, int]] = []
    at = 0
    for step in steps:
        lo = pattern.find(step, at)
        spans.append((lo, lo + len(step)) if lo >= 0 else (0, 0))
        at = lo + len(step) if lo >= 0 else at
    return tuple(spans)


def interleave(
    whole: IntArray, lists: Sequence[IntArray], eligible: BoolArray, depth: int, reach: int = 0
) -> IntArray:
    """``whole`` (a permutation of the tools) with its head merged from ``lists``.

    Among the ``eligible`` tools, round robin by depth over ``[whole, *lists]``: the whole
    order's first, each list's first, the whole order's second, ... each tool once, until
    ``depth`` tools; then every other tool in ``whole``'s order (ineligible ones included,
    where ``whole`` had them). The first eligible tool of ``whole`` stays first. With
    ``reach``, the lists' tools are only those among the first ``reach`` eligible tools of
    ``whole``.
    """
    if not lists or depth <= 0:
        return whole
    near = eligible
    if reach > 0:
        near = np.zeros(len(eligible), dtype=bool)
        near[whole[eligible[whole]][:reach]] = True
    heads = [whole[eligible[whole]][:depth].tolist()]
    heads += [order[near[order]][:depth].tolist() for order in lists]
    head: list[int] = []
    seen: set[int] = set()
    for level in range(depth):
        for top in heads:
            if level < len(top) and top[level] not in seen:
                seen.add(top[level])
                head.append(top[level])
                if len(head) == depth:
                    return _with_rest(whole, head)
    return _with_rest(whole, head)


def _with_rest(whole: IntArray, head: list[int]) -> IntArray:
    """``head`` then the tools of ``whole`` not in it, in ``whole``'s order."""
    rest = np.ones(len(whole), dtype=bool)
    rest[head] = False
    return np.concatenate([np.asarray(head, dtype=np.intp), whole[rest[whole]]])
