"""How well is an encode predicted? (``EmbeddingJobs.estimate``, the shortlist's and the
inline embedding's go / no-go)

``PYTHONPATH=service:. python -m loadtests.estimate [--datasets ...] [--queries 20]
[--train 4]``: in process, on this machine, one thread a model as the service encodes. For
each set in turn, the rates are first measured three ways: as a fresh replica measures them
at start (``start``: ``ToolVectors.calibrate`` on the built-in tools of
``pipeline.calibration``), and as the background jobs measure them, ``--train`` batches of 16
tool texts a model, MiniLM's then bge-small's (the order a new catalog's jobs run in), taken
from the set before it in the list (a catalog seen earlier) or from the set itself (a catalog
being embedded). Then ``--queries`` of the set's real needs are asked of a new catalog
(``Selector`` with the static tables, no catalog embedded), the ten tools the shortlist arm
picks for each are taken where it asks for their vectors, and they are encoded, each model's
texts in one call, as ``ToolVectors.rows`` does: one model after the other (the helper thread
taken by another request; predicted by the sum of the models' predictions) and side by side
(the second model on the helper thread; predicted by the longest).

Printed per set and source of the rates: each model's rate, and how the time taken compares
with the prediction (taken / predicted: median, 90th percentile, highest, and the share
under-predicted) both ways. Nothing else runs beside it unless ``--beside-job``: then a niced
thread encodes batches of 16 of the set's tool texts, MiniLM's then bge-small's, the whole
time, as a new catalog's background job does in the service while its first answers are
shortlisted (the two then share the cores with it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shlex
import sys
import threading
import time
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from tool_selector.embeddings.cache import NullCache
from tool_selector.embeddings.encoder import Encoder, Ensemble
from tool_selector.embeddings.factory import encoder_from_settings, static_from_settings
from tool_selector.offline.evaluation.dataset import Dataset, default_bench_dir, load_dataset
from tool_selector.pipeline import calibration
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore, Found
from tool_selector.pipeline.helper import Helper
from tool_selector.pipeline.jobs import EmbeddingJobs, lower_priority
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.tool_vectors import ToolVectors
from tool_selector.ranking.fitted import Rules
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

BATCH = 16


def _timed(encoder: Encoder, texts: list[str]) -> float:
    began = time.perf_counter()
    encoder.encode(texts)
    return time.perf_counter() - began


def _texts(selector: Selector, data: Dataset) -> dict[str, list[str]]:
    """Each model's texts of the set's catalog, as the service has them read."""
    entry = selector.entry(ToolSource.of(list(data.tools))).entry
    assert selector.encoders is not None
    return {p.model_id: entry.texts(p.model_id) for p in selector.encoders.parts}


def _trained(
    models: Ensemble, texts: dict[str, list[str]], batches: int, seed: int
) -> EmbeddingJobs:
    jobs, rng = EmbeddingJobs(), random.Random(seed)
    for part in models.parts:  # MiniLM's job, then bge-small's
        own = texts[part.model_id]
        for _ in range(batches):
            batch = rng.sample(own, min(BATCH, len(own)))
            seconds = _timed(part, batch)
            jobs.observe(part.model_id, batch, seconds)
    return jobs


def _leaders(cold: Selector, data: Dataset, queries: int, seed: int) -> list[list[int]]:
    """The tools the shortlist arm would read for ``queries`` real needs: the positions it
    asks ``ToolVectors.rows`` for, taken there (nothing is encoded: the answer stays the
    static arm's)."""
    needs = [q for q in data.queries if q.gold]
    picked = random.Random(seed).sample(needs, min(queries, len(needs)))
    asked: list[list[int]] = []

    def taken(
        encoders: Ensemble,
        found: Found,
        positions: npt.NDArray[np.intp],
        started: float,
        *,
        rescue: bool = False,
    ) -> None:
        if not rescue:  # a rescue asks for the same leaders again
            asked.append([int(i) for i in positions])

    cold.vectors.rows = taken  # type: ignore[method-assign]
    for q in picked:
        cold.select(SearchRequest(pattern=q.text, tools=list(data.tools)))
    return asked


def _ratios(taken: Sequence[float], predicted: Sequence[float]) -> str:
    r = np.asarray(taken) / np.asarray(predicted)
    return (
        f"{np.median(r):.2f} | {np.percentile(r, 90):.2f} | {r.max():.2f} | "
        f"{100 * float(np.mean(r > 1)):.0f}%"
    )


def _calibrated(models: Ensemble) -> EmbeddingJobs:
    """The rates a fresh replica measures at start (``ToolVectors.calibrate``)."""
    jobs = EmbeddingJobs()
    vectors = ToolVectors(
        NullCache(), CatalogStore(0), jobs, Rules().fields, embed_deadline=0.0, batch_size=BATCH
    )
    vectors.calibrate(models, calibration.TOOLS)
    return jobs


def _both(models: Ensemble, each: dict[str, list[str]], helper: Helper) -> tuple[float, float]:
    """Seconds to encode each model's texts one model after the other, then side by side."""
    turn = sum(_timed(p, each[p.model_id]) for p in models.parts)
    return turn, _side_by_side(models, each, helper)


def _side_by_side(models: Ensemble, each: dict[str, list[str]], helper: Helper) -> float:
    """Seconds to encode each model's texts as ``ToolVectors.rows`` does with the helper
    free: the first model here, the others on the helper thread meanwhile."""
    first, *rest = models.parts
    thread = helper.take()
    assert thread is not None
    try:
        began = time.perf_counter()
        later = [thread.submit(p.encode, each[p.model_id]) for p in rest]
        first.encode(each[first.model_id])
        for f in later:
            f.result()
        return time.perf_counter() - began
    finally:
        helper.leave()


@contextlib.contextmanager
def _beside(models: Ensemble, texts: dict[str, list[str]], on: bool) -> Iterator[None]:
    """While inside: a niced thread encoding batches of ``BATCH`` of ``texts``, each model's
    in turn, as a catalog's background job (``jobs.lower_priority``); nothing when off."""
    if not on:
        yield
        return
    stop = threading.Event()

    def job() -> None:
        lower_priority()
        rng = random.Random(0)
        while not stop.is_set():
            for part in models.parts:
                own = texts[part.model_id]
                part.encode(rng.sample(own, min(BATCH, len(own))))

    thread = threading.Thread(target=job, name="beside-job", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run(names: list[str], queries: int, batches: int, beside_job: bool = False) -> list[str]:
    settings = Settings.from_env(os.environ)
    models, tables = encoder_from_settings(settings), static_from_settings(settings)
    if not isinstance(models, Ensemble) or tables is None:
        raise SystemExit("needs both models and the static tables")
    jobs = EmbeddingJobs()
    jobs.close(0.0)  # nothing is ever embedded: every answer is the static arm's
    cold = Selector(encoder=models, static=tables, jobs=jobs, embed_deadline=0.0)
    sets = [load_dataset(default_bench_dir(), n) for n in names]
    texts = {d.name: _texts(cold, d) for d in sets}
    helper = Helper()
    rows = [
        "| set | rates from | ms a 1,000 characters, each model | leaders' chars | one after "
        "the other: ms taken | taken / predicted (the sum), p50 | p90 | max | under | side by "
        "side: ms taken | taken / predicted (the longest), p50 | p90 | max | under |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, data in enumerate(sets):
        leaders = _leaders(cold, data, queries, seed=i)
        own = texts[data.name]
        for source in ("start", sets[i - 1].name, data.name):
            new = (
                _calibrated(models)
                if source == "start"
                else _trained(models, texts[source], batches, seed=i)
            )
            eaches = [
                {p.model_id: [own[p.model_id][j] for j in at] for p in models.parts}
                for at in leaders
            ]
            with _beside(models, own, beside_job):
                turn, side = zip(*(_both(models, each, helper) for each in eaches), strict=True)
            summed, longest, chars = [], [], []
            for each in eaches:
                predicted = [new.estimate(m, t) for m, t in each.items()]
                summed.append(sum(predicted))
                longest.append(max(predicted))
                first = each[models.primary.model_id]
                chars.append(sum(len(t) for t in first) / len(first))
            rates = " / ".join(f"{1e6 * new.rate(p.model_id):.0f}" for p in models.parts)
            rows.append(
                f"| {data.name} | {source} | {rates} | {np.mean(chars):.0f} | "
                f"{1000 * np.median(turn):.0f} | {_ratios(turn, summed)} | "
                f"{1000 * np.median(side):.0f} | {_ratios(side, longest)} |"
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["agent", "arcade", "sealtools", "bfcl"])
    parser.add_argument("--queries", type=int, default=20, help="real needs a set")
    parser.add_argument("--train", type=int, default=4, help="batches of 16 a model")
    parser.add_argument(
        "--beside-job", action="store_true", help="a niced thread embedding the catalog meanwhile"
    )
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        rows = run(args.datasets, args.queries, args.train, args.beside_job)
    print("\n".join(rows))
    given = sys.argv[1:] if argv is None else argv
    print(f"\n$ PYTHONPATH=service:. python -m loadtests.estimate {shlex.join(given)}")


if __name__ == "__main__":
    main()
