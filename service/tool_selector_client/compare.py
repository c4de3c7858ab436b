"""Agreement between two pick lists (ours vs the proxy's local ``relevance`` picks).

Definitions (A = selector picks, B = relevance picks, both best first, names forced by
``always_keep`` removed from both before comparing):

- ``top1``: both non-empty and ``A[0] == B[0]``; ``None`` unless both are non-empty.
- ``overlap``: overlap@k = ``|A & B| / max(|A|, |B|)``; ``None`` when both are empty.
- ``jaccard``: ``|A & B| / |A | B|``; ``None`` when both are empty.
- ``abstain``: which side returned nothing (``none``, ``selector``, ``relevance``, ``both``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Abstain", "Agreement", "agreement"]

Abstain = Literal["none", "selector", "relevance", "both"]


@dataclass(frozen=True, slots=True)
class Agreement:
    """How far two pick lists agree."""

    top1: bool | None
    overlap: float | None
    jaccard: float | None
    abstain: Abstain


def agreement(
    selector: Sequence[str], relevance: Sequence[str], forced: Collection[str] = ()
) -> Agreement:
    """Compare ``selector`` with ``relevance`` after dropping the ``forced`` names."""
    a = [n for n in dict.fromkeys(selector) if n not in forced]
    b = [n for n in dict.fromkeys(relevance) if n not in forced]
    abstain: Abstain = (
        "both" if not a and not b else "selector" if not a else "relevance" if not b else "none"
    )
    if not a and not b:
        return Agreement(top1=None, overlap=None, jaccard=None, abstain=abstain)
    common = len(set(a) & set(b))
    return Agreement(
        top1=(a[0] == b[0]) if a and b else None,
        overlap=common / max(len(a), len(b)),
        jaccard=common / len(set(a) | set(b)),
        abstain=abstain,
    )
