"""The caller's controls over one catalog: which tools may be answered (filters), and how
many fit the answer (budget). Pure: arrays and tuples in, arrays and tuples out.

Filters run before ranking (``allowed``): a removed tool takes no place in the order, the
exact-name rule or ``always_keep``. The budget runs after it (``fit_budget``): tools are
taken best first while they fit; one that does not fit is skipped, never a reason to drop a
better one that does. What a tool's size, annotations and safety mark mean, and how globs
match, is ``tool_selector_client.policy``'s: the client applies the same rule when it fails
open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tool_selector.ranking.checkpoints import checkpoint
from tool_selector_client.policy import FILTER_KINDS, facts, glob_matcher, name_matches
from tool_selector_client.wire import Filters, Tool

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Traits:
    """Per-tool policy facts of one catalog (arrays in catalog order; ``policy.facts``)."""

    size: npt.NDArray[np.int64]
    read_only: BoolArray
    destructive: BoolArray
    unsafe: BoolArray

    @classmethod
    def of(cls, tools: Sequence[Tool]) -> Traits:
        found = [facts(t) for t in tools]
        return cls(
            size=np.array([f.size for f in found], dtype=np.int64),
            read_only=np.array([f.read_only for f in found], dtype=bool),
            destructive=np.array([f.destructive for f in found], dtype=bool),
            unsafe=np.array([f.unsafe for f in found], dtype=bool),
        )


def allowed(
    names: Sequence[tuple[str, str]], traits: Traits, filters: Filters
) -> tuple[BoolArray, dict[str, int]]:
    """Which tools ``filters`` leave in (``names``: each tool's full and bare name), and
    how many each filter removed, a tool counted under the first one it fails
    (``FILTER_KINDS``, as ``policy.failed_filter`` orders them)."""
    n = len(names)
    allow, deny = glob_matcher(filters.allow or ()), glob_matcher(filters.deny)
    ones = np.ones(n, dtype=bool)
    checks = (
        ones if filters.allow is None else _matching(allow, names),
        ones if deny is None else ~_matching(deny, names),
        ones if filters.allow_unsafe else ~traits.unsafe,
        traits.read_only if filters.read_only else ones,
        ~traits.destructive if filters.exclude_destructive else ones,
    )
    keep = np.ones(n, dtype=bool)
    removed: dict[str, int] = {}
    for kind, passes in zip(FILTER_KINDS, checks, strict=True):
        out = keep & ~passes
        removed[kind] = int(out.sum())
        keep &= ~out
    return keep, removed


def _matching(matcher: re.Pattern[str] | None, names: Iterable[tuple[str, str]]) -> BoolArray:
    """Which names ``matcher`` matches; a checkpoint before each (the caller's globs and
    names together may cost seconds: an abandoned request stops here)."""
    found = []
    for full, bare in names:
        checkpoint()
        found.append(name_matches(matcher, full, bare))
    return np.array(found, dtype=bool)


def fit_budget(
    candidates: Iterable[int], size: npt.NDArray[np.int64], count: int, max_bytes: int | None
) -> list[int]:
    """``candidates`` (best first) taken while fewer than ``count`` are taken, skipping each
    one whose size would take the total over ``max_bytes``. A tool larger than the whole
    budget is never taken."""
    taken: list[int] = []
    total = 0
    for i in candidates:
        if len(taken) >= count:
            break
        cost = int(size[i])
        if max_bytes is not None and total + cost > max_bytes:
            continue
        taken.append(i)
        total += cost
    return taken
