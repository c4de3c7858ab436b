"""Every constant a selector ranks with, in one place, and the digest the search log names.

Each arm's fusion (``FusionParams``: weights fitted on the dev split of every set by
``python -m tool_selector.offline.evaluation.fit [--arm cross|static]``, floors swept by
``loadtests.calibrate``, calibrations in ``ranking.calibration``), the foreign-language
damping and gloss share (dev half of ``eval/multilingual``), the BM25 field weights, the
context weights (``python -m tool_selector.offline.evaluation.context --sweep``) and the
multi-step rule (``loadtests.steps``). How each was chosen and what it measured:
docs/quality.md. ``Rules`` bundles the values one selector ranks with; ``Rules.digest``
hashes them with the module constants that shape an answer, so two search log lines with
the same digest and model were ranked by the same rules.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from tool_selector.ranking import calibration, context, dense, text
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.context import ContextWeights
from tool_selector.ranking.fusion import FITTED_TERMS, TERMS, FusionParams
from tool_selector.ranking.learned import LearnRule
from tool_selector.ranking.steps import StepRule

#: Each dense arm's fitted term weights, a row per arm in ``fusion.FITTED_TERMS`` order
#: (``fit [--arm cross|static]`` prints a row): the model's cosines (``hybrid``), the static
#: table's tool vectors against the model's query vector (``cross``: the cold path's usual
#: case, the table keeps the model's 384 dimensions) and against a static query vector
#: (``static``: while the model loads). The cold arms trust the static cosines' rank less
#: and the pattern's words more than the hybrid does.
# fmt: off
WEIGHTS = {
    #          cos    z      rank   specific name    peak   long
    "hybrid": (1.334, 0.643, 1.9,   4.257,   7.248,  1.133, 0.441),
    "static": (1.226, 0.82,  0.306, 5.003,   10.465, 1.508, 0.58),
    "cross":  (0.601, 0.749, 0.731, 5.782,   9.637,  0.976, 0.526),
}
# fmt: on


def _weights(arm: str) -> dict[str, Any]:
    """``arm``'s row of ``WEIGHTS`` as ``FusionParams`` fields (typed ``Any``: ``**`` of it)."""
    return {t.weight: w for t, w in zip(FITTED_TERMS, WEIGHTS[arm], strict=True)}


#: The learned term's weight in every arm's fusion (``ranking.learned``: a column in -1..1)
#: and how events vote; chosen on the dev splits (``python -m
#: tool_selector.offline.evaluation.learn_grid``, docs/quality.md; no set lower at 10%, 30%
#: or 50% wrong calls): one near call counts, damped by a prior of 2 (its column at most a
#: third); two or more count whole.
LEARN_WEIGHT = 12.0
#: The learned term moves an answer only where the ranking without it is unsure: its first
#: tool's calibrated relevance below this (a confident answer stands).
LEARN_BELOW = 0.5
LEARN = LearnRule(support=1.0, lone=2.0)

#: Where the first model finds no useful match, the ensemble's evidence (the mean of every
#: model's cosines, plus specificity's credit) must stay under this too before the answer is
#: empty (``FusionParams.ensemble_floor``); chosen on the dev splits: on the hybrid between
#: the no-match query it abstains on and the real needs it left empty, on the cold path
#: (both tables against both models' query vectors) the largest that keeps every dev
#: no-match abstention (docs/quality.md, "Every encoder reads the bar").
HYBRID_ENSEMBLE_FLOOR = 0.31
CROSS_ENSEMBLE_FLOOR = 0.16

HYBRID = FusionParams(
    **_weights("hybrid"),
    rank_k=10,
    subword_weight=0.2,
    short_terms=4,
    long_terms=16,
    explained_top=5,
    exact_bonus=10.0,
    near_name_bonus=5.0,
    coverage_credit=0.2,
    no_match_floor=0.15,
    tool_floor=0.12,
    lexical_floor=1e-6,
    relevance=calibration.HYBRID,
    lexical_relevance=calibration.LEXICAL,
    learn_weight=LEARN_WEIGHT,
    learn_below=LEARN_BELOW,
    ensemble_floor=HYBRID_ENSEMBLE_FLOOR,
)
#: Each cold arm's floors are its own (the static query's higher: its cosines run higher).
STATIC = replace(
    HYBRID,
    **_weights("static"),
    tool_floor=0.11,
    no_match_floor=0.23,
    relevance=calibration.STATIC,
    ensemble_floor=None,
)
CROSS = replace(
    HYBRID,
    **_weights("cross"),
    tool_floor=0.08,
    no_match_floor=0.14,
    relevance=calibration.CROSS,
    ensemble_floor=CROSS_ENSEMBLE_FLOOR,
)
#: The static arm's leaders the models read on a catalog they have not embedded yet
#: (``pipeline.shortlist``), when the request's embedding deadline has room: chosen on the
#: dev splits among 5, 8, 10, 15 and 20 (docs/quality.md, "The shortlist"); 0: off.
SHORTLIST = 10
#: How much of the lexical half a non-English pattern keeps (``multilingual_params_of``).
MULTILINGUAL_LEXICAL = 0.5
#: Share of the English model's cosines of a non-English pattern's gloss in its dense score
#: (the rest: the multilingual arm's cosines of the pattern as sent).
GLOSS_MODEL_SHARE = 0.2
#: The multi-step rule ``TOOL_SELECTOR_MULTI_STEP`` turns on: tasks of 250 characters or
#: more (a few sentences asking for one thing are one need), each clause's tools among the
#: whole order's first 50, each clause ranked with the mean of the whole pattern's cosines
#: and its own in the pattern's context (``StepRule.in_context``: no second encode).
SHIPPED_STEPS = StepRule(min_chars=250, reach=50, own_vectors=False, in_context=True)


def multilingual_params_of(
    params: FusionParams, lexical: float = MULTILINGUAL_LEXICAL
) -> FusionParams:
    """``params`` with every lexical term's weight (``fusion.TERMS``) scaled by ``lexical``,
    for non-English patterns: their few words a tool shares (a product name, a path) say
    less about the need than in English, where every word can."""
    scaled = {t.weight: lexical * getattr(params, t.weight) for t in TERMS if t.half == "lexical"}
    return replace(params, **scaled)


@dataclass(frozen=True, slots=True)
class Rules:
    """The constants one selector ranks with: each arm's fusion (``hybrid``, ``static``,
    ``cross``; ``multilingual``: none for ``multilingual_params_of(hybrid)``), the gloss
    share, the BM25 field weights, the context weights, the multi-step rule (``steps``:
    none ranks every pattern whole) and how learned evidence votes (``learn``)."""

    hybrid: FusionParams = HYBRID
    static: FusionParams = STATIC
    cross: FusionParams = CROSS
    multilingual: FusionParams | None = None
    gloss_share: float = GLOSS_MODEL_SHARE
    fields: FieldWeights = FieldWeights()
    context: ContextWeights = ContextWeights()
    steps: StepRule | None = None
    learn: LearnRule = LEARN
    shortlist: int = SHORTLIST

    @property
    def foreign(self) -> FusionParams:
        """The fusion of a pattern read as not English."""
        return (
            multilingual_params_of(self.hybrid) if self.multilingual is None else self.multilingual
        )

    def digest(self, *, glossary: bool) -> str:
        """sha256 (16 hex digits) of these rules, whether a glossary glosses foreign patterns,
        and the module constants that shape an answer (``CONSTANTS``)."""
        table = {"rules": self, "glossary": glossary, "constants": CONSTANTS}
        encoded = msgspec.json.encode(table, order="deterministic")
        return hashlib.sha256(encoded).hexdigest()[:16]


#: Module constants that change answers without being a field of ``Rules``.
CONSTANTS = {
    "dense.WHOLE_CHARS": dense.WHOLE_CHARS,
    "dense.WINDOW_CHARS": dense.WINDOW_CHARS,
    "context.CONTEXT_CHARS": context.CONTEXT_CHARS,
    "context.CONTEXT_MESSAGES": context.CONTEXT_MESSAGES,
    "context.RECENT_TOOLS": context.RECENT_TOOLS,
    "text.TEXT_FORMAT_VERSION": text.TEXT_FORMAT_VERSION,
}
#: What the service ranks with by default, multi-step tasks on (``TOOL_SELECTOR_MULTI_STEP``).
SHIPPED = Rules(steps=SHIPPED_STEPS)
