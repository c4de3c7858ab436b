"""A new short request's answer, in process, stage by stage: ``python -m loadtests.stages``.

Builds the service's state from the default settings (``http.app.build_state``, the encoders
and tables ``make install`` placed), caps BLAS at one thread as the service does, sends a
``--tools`` catalog of Seal-Tools tools until every encoder has embedded it, then decodes
and selects each of the agent set's short requests (under 100 characters, never seen: the
query cache cannot help; ``--rounds`` passes, each made new with a prefix word) one at a
time, as the service's worker thread does. Prints p50 / p90 / p99 ms of the whole and of
each stage the search log names (``stages_ms``).

``--ab`` alternates, request by request, the shipped service with one change undone, and
each round swaps them, so each way reads every request once (each made new by the round's
prefix) and both see the same noise; the answers are the same either way. ``--ab bar`` (or
``--ab`` alone): the relevance bar's cosines read after every query vector (the order before
c2b2834: ``QueryVectors.vector`` given no ``meanwhile``, so since 04ed913 the words are read
after it too); ``--ab sort``: the fusion's orders by numpy's stable argsort (before
``fusion.descending`` sorted keys); ``--ab words``: the pattern's words read by the ranking
after the cosines (``ranker.read_lexical`` not called while bge-small encodes).

No HTTP (``loadtests.budget`` measures that); no test asserts a time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from prometheus_client import CollectorRegistry

from loadtests import workload
from loadtests.budget import agent_requests
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.http.app import build_state
from tool_selector.http.startup import limit_blas_threads, load_encoder
from tool_selector.pipeline import arms
from tool_selector.pipeline.query_vectors import QueryVectors
from tool_selector.ranking import fusion, ranker
from tool_selector.settings import Settings
from tool_selector_client.wire import SEARCH_PATH

Way = Callable[[bytes], dict[str, float]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--ab",
        nargs="?",
        const="bar",
        choices=["bar", "sort", "words"],
        help="alternate with the bar read last (bar), the stable argsort (sort) or the"
        " words read last (words)",
    )
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    print(f"# command: PYTHONPATH=service:. python -m loadtests.stages {' '.join(argv or [])}")
    select = _selector(args.tools)
    patterns = agent_requests(random.Random(args.seed))
    tools = workload.catalog(args.tools, offset=76)
    bodies = [workload.body("please " * r + p, tools) for r in range(args.rounds) for p in patterns]
    ways = {"shipped": select}
    if args.ab:
        undone = {
            "bar": ("bar read last", _bar_last),
            "sort": ("stable argsort", _argsort),
            "words": ("words read last", _words_last),
        }
        label, undo = undone[args.ab]
        ways[label] = undo(select)
    timed: dict[str, dict[str, list[float]]] = {w: defaultdict(list) for w in ways}
    for n, body in enumerate(bodies):
        way = list(ways)[(n + n // len(patterns)) % len(ways)]  # swapped each round
        for stage, one in ways[way](body).items():
            timed[way][stage].append(one)
    print("| way | n | stage | p50 ms | p90 ms | p99 ms |")
    print("|---|---:|---|---:|---:|---:|")
    for way, stages in timed.items():
        for stage, ms in stages.items():
            print(
                f"| {way} | {len(ms)} | {stage} | {_p(ms, 0.5):.2f} | {_p(ms, 0.9):.2f} "
                f"| {_p(ms, 0.99):.2f} |"
            )
    return 0


def _selector(size: int) -> Way:
    """The service's decoder and selector, every encoder done with a ``size``-tool catalog:
    a function from a body to its milliseconds, whole and per stage."""
    state = build_state(Settings.from_env(os.environ), encoder_from_settings, CollectorRegistry())
    load_encoder(state)
    limit_blas_threads(state.settings.blas_threads)  # as the service caps it
    decoder, selector = state.decoder, state.selector
    warm = workload.body("warm this catalog", workload.catalog(size, offset=76))
    deadline = time.monotonic() + 1800
    while selector.select(decoder.decode(warm, SEARCH_PATH)[1]).provenance.embedded != "complete":
        if time.monotonic() > deadline:
            raise TimeoutError("the catalog was never embedded by every encoder")
        time.sleep(0.5)

    def select(body: bytes) -> dict[str, float]:
        began = time.perf_counter()
        outcome = selector.select(decoder.decode(body, SEARCH_PATH)[1])
        whole = {"whole (decode and select)": 1000 * (time.perf_counter() - began)}
        return whole | {k: 1000 * v for k, v in outcome.timings.items()}

    return select


def _undone(select: Way, *patches: tuple[object, str, object]) -> Way:
    """``select`` with each ``(owner, name, value)`` of ``patches`` set for the request and
    put back after it."""

    def way(body: bytes) -> dict[str, float]:
        shipped = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
        for owner, name, value in patches:
            setattr(owner, name, value)
        try:
            return select(body)
        finally:
            for owner, name, value in shipped:
                setattr(owner, name, value)

    return way


def _bar_last(select: Way) -> Way:
    """``select`` with ``QueryVectors.vector`` given no ``meanwhile``: the bar read last."""
    shipped = QueryVectors.vector

    def vector(self: QueryVectors, *args: Any, **kwargs: Any) -> Any:
        return shipped(self, *args[:4], **{**kwargs, "meanwhile": None})  # (encoders ... ahead)

    return _undone(select, (QueryVectors, "vector", vector))


def _argsort(select: Way) -> Way:
    """``select`` with the fusion's orders by ``np.argsort(-scores, kind="stable")``, the
    indices ``fusion.descending`` gives (tested), as before it sorted keys (``ranker``
    imports it, so both modules' names are set)."""

    def stable(scores: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
        return np.argsort(-scores, kind="stable")

    return _undone(select, (fusion, "descending", stable), (ranker, "descending", stable))


def _words_last(select: Way) -> Way:
    """``select`` with nothing read of the words while bge-small encodes: the dense arm
    makes no ``LexicalReading`` (its ``read_lexical``, imported from ``ranker``, gives none)
    and ``rank`` reads the words itself, as before."""

    def none(*_args: Any) -> None:
        return None

    return _undone(select, (arms, "read_lexical", none))


def _p(values: list[float], q: float) -> float:
    if q == 0.5:
        return statistics.median(values)
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
