"""The shortlist arm: a first answer on a catalog the models have not embedded yet, ranked
as a fully embedded catalog ranks its leaders.

The static arm ranks every tool from the static tables (``pipeline.arms.StaticArm``). The
first ``Rules.shortlist`` tools of its fused order are then read by the models themselves:
their vectors from the caches, or encoded now when the request's embedding deadline has room
for them all (``ToolVectors.rows``: the models side by side when the helper thread is free;
kept apart from the catalogs' cache for the next requests, so the background job embeds the
whole catalog in its own batches, as an in-process run does). The answer is fused with the
hybrid rules over the models' cosines: the shortlisted tools' own, the others' estimated
from their static cosines by the line through the shortlisted pairs and never above the
lowest shortlisted one, so the signals that read the whole column (its z-scores, its ranks) read a
whole catalog and no tool below the shortlist climbs above it on its estimate. A multi-step
pattern (``ReadPattern.steps``) keeps the static arm's answer: its tools lie beyond one
shortlist (each step's own), and capped there they lost (docs/quality.md). So does every
answer past the deadline (``Columns.unread``), except one that says no match: ``Selector``
reads it again from this arm on with ``ArmRequest.rescue``, and the leaders are read if
predicted to fit ``Shortlist.rescue`` (half a second, or what is left of the deadline if
more), so an empty answer rests on the models' cosines. So does one read with the static
query vector (no model loaded). The models are those the static arm paired its tables with
(``arms.paired``: both, or MiniLM alone where bge-small's table is missing).

The leaders are picked among the tools the caller's filters leave in
(``controls.filter_mask``): a denied tool costs no encode and takes no allowed tool's place.
Limits: the int8 models' dynamic quantization reads each batch, so a leader's vector depends
a little on which others were encoded with it (an answer may differ in a near tie with the
catalog's embedded vectors).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from tool_selector.embeddings.encoder import Ensemble
from tool_selector.pipeline.columns import ArmRequest, Columns, Provenance, Sources, timed
from tool_selector.pipeline.controls import filter_mask
from tool_selector.ranking.controls import BoolArray
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.fusion import fuse
from tool_selector.ranking.ranker import signals


@dataclass(frozen=True, slots=True)
class ShortlistArm:
    """Refines the static arm's answer with the models' vectors of its leaders (module
    docstring); leaves every other answer as it is."""

    sources: Sources

    def read(self, request: ArmRequest, columns: Columns) -> Columns:
        src, cosines = self.sources, columns.cosines
        size = src.rules.shortlist
        if size <= 0 or cosines is None or request.pattern.steps:
            return columns
        if cosines.path != "static" or cosines.params is not src.rules.cross:
            return columns  # not the static arm's, or read with the static query vector
        models = Ensemble.of(cosines.encoder)  # the models the static arm paired its tables with
        with timed(request.timings, "shortlist"):
            catalog, params = request.found.entry.catalog, cosines.params
            sig = signals(
                catalog, columns.query, columns.bm25, cosines.scores, params.explained_top
            )
            allowed, _ = filter_mask(request.filters, request.found.entry)
            picked = _leaders(fuse(sig, params), allowed, size)
            found, started = request.found, request.started
            if not len(picked):
                return columns  # every tool filtered out
            rows = src.tools.rows(models, found, picked, started, rescue=request.rescue)
            if rows is None:  # past the deadline (or the rescue's limit): the static answer
                return columns if request.rescue else replace(columns, unread=True)
            qvec, _ = src.queries.vector(models, request.pattern.words, (), request.ahead)
            scores = _mixed(cosines.scores, picked, cosine_scores(qvec, models.combine(rows)))
            bar = cosines.bar
            if bar is not None:  # the first model's own, as the dense arm's bar
                bar = _mixed(bar, picked, cosine_scores(models.first(qvec), rows[0]))
        made = Provenance("shortlist", cosines.provenance.encoders, "partial")
        answer = replace(cosines, scores=scores, params=src.rules.hybrid, provenance=made, bar=bar)
        return replace(columns, cosines=answer)


def _leaders(fused: FloatArray, allowed: BoolArray | None, size: int) -> npt.NDArray[np.intp]:
    """The first ``size`` tools of the fused order that the caller's filters leave in."""
    order = np.argsort(-fused, kind="stable")
    return order[allowed[order]][:size] if allowed is not None else order[:size]


def _mixed(static: FloatArray, picked: npt.NDArray[np.intp], exact: FloatArray) -> FloatArray:
    """``exact`` at ``picked``; elsewhere ``static`` on the least-squares line through the
    picked pairs (its slope at least 0), at most the lowest of ``exact``."""
    x, y = static[picked].astype(np.float64), exact.astype(np.float64)
    slope = 0.0
    if len(x) > 1 and float(np.ptp(x)) > 1e-6:
        slope = max(float(np.polyfit(x, y, 1)[0]), 0.0)
    intercept = float(y.mean() - slope * x.mean())
    out = np.minimum(intercept + slope * static.astype(np.float64), float(y.min()))
    out[picked] = y
    return np.asarray(out, dtype=np.float32)
