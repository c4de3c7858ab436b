"""What the relevance bar saw where an answer is empty: ``python -m loadtests.empty_evidence``.

Runs ``tool-selector eval``'s own rows (the same ``Evaluator``, models and rules as the CLI
builds them: service, service lexical, service cold) over each set's queries and, for every
answer that came back empty, prints the best evidence the bar judged (``ranker._verdicts``:
the first model's, and on an ensemble's answer every model's, unshifted) beside the floor it
was held to. Two lists per set and path: the real needs answered empty, and the no-match
queries the path abstained on. Where the largest abstained no-match evidence is at or above
the smallest empty real need's, no floor on that evidence answers every real need and keeps
every abstention: the line says "overlap". Issue 37 (V) part 5.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tool_selector.embeddings.factory import encoder_from_settings, multilingual_from_settings
from tool_selector.offline.evaluation.dataset import default_bench_dir, pick_queries
from tool_selector.offline.evaluation.runner import EvalConfig, Evaluator, load_all
from tool_selector.pipeline.ask import Ask
from tool_selector.pipeline.selector import Outcome, Selector
from tool_selector.ranking import ranker
from tool_selector.ranking.fitted import SHIPPED_STEPS
from tool_selector.ranking.fusion import ensemble_evidence, evidence, floors
from tool_selector.ranking.glossary import default_glossary
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

#: What the bar judged in the last ``rank``: the first model's best evidence and its floor,
#: and (an ensemble's answer only) every model's best, unshifted, and its floor.
Seen = dict[str, float]
_SEEN: Seen = {}


def _spy(verdicts: Callable[..., Any]) -> Callable[..., Any]:
    def judged(sig: Any, order: Any, named: Any, fusion: Any, top_k: int, **kw: Any) -> Any:
        params, controls = fusion
        tools = ranker._judged(order, controls.allowed, top_k, sig)
        first = evidence(sig, params)[tools]
        _SEEN["first"] = float(first.max()) if len(tools) else 0.0
        _SEEN["floor"] = floors(sig.dense is None, params)[0]
        every = ensemble_evidence(sig, params)
        if every is not None:
            shift = params.ensemble_floor - params.no_match_floor
            _SEEN["every"] = float(np.max(every[tools]) + shift)
            _SEEN["every_floor"] = params.ensemble_floor
        return verdicts(sig, order, named, fusion, top_k, **kw)

    return judged


@dataclass
class Empties:
    """One set's empty answers on one path: (evidence seen, pattern) per kind."""

    real: list[tuple[Seen, str]] = field(default_factory=list)
    abstained: list[tuple[Seen, str]] = field(default_factory=list)
    real_needs: int = 0
    no_match: int = 0


def _watch(selector: Selector, gold: dict[str, tuple[str, ...]], out: Empties) -> None:
    select = selector.select

    def watched(request: Ask | SearchRequest) -> Outcome:
        _SEEN.clear()
        outcome = select(request)
        if request.pattern in gold:
            real = bool(gold[request.pattern])
            out.real_needs += real
            out.no_match += not real
            if not outcome.ranking.names:
                (out.real if real else out.abstained).append((dict(_SEEN), request.pattern))
        return outcome

    selector.select = watched  # type: ignore[method-assign]


def _fmt(seen: Seen) -> str:
    every = seen.get("every")
    return f"{seen.get('first', 0.0):.3f}" + ("" if every is None else f" / {every:.3f}")


def _lines(name: str, path: str, e: Empties) -> list[str]:
    share = 100 * len(e.real) / max(e.real_needs, 1)
    head = f"{name} {path}: real needs empty {len(e.real)}/{e.real_needs} ({share:.1f}%)"
    head += f", no-match abstained {len(e.abstained)}/{e.no_match}"
    keys = ("first", "every")
    verdict = []
    for key in keys:
        real = [s[key] for s, _ in e.real if key in s]
        held = [s[key] for s, _ in e.abstained if key in s]
        if real and held:
            gap = "overlap" if max(held) >= min(real) else "separable"
            verdict.append(f"{key}: {gap} (real >= {min(real):.3f}, no-match <= {max(held):.3f})")
    seen = next((s for s, _ in e.real + e.abstained), {})
    floors = f" [floor {seen.get('floor', 0):.3f}"
    floors += "" if seen.get("every") is None else f" / {seen.get('every_floor', 0):.3f}"
    out = [head + floors + "]" + ("; " + "; ".join(verdict) if verdict else "")]
    out += [f"  real    {_fmt(s)}  {p[:90]!r}" for s, p in sorted(e.real, key=lambda x: x[1])]
    out += [f"  abstain {_fmt(s)}  {p[:90]!r}" for s, p in sorted(e.abstained, key=lambda x: x[1])]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append", help="default: agent, arcade, metatool")
    parser.add_argument("--split", default="test", choices=["dev", "test", "all"])
    args = parser.parse_args()
    names = args.dataset or ["agent", "arcade", "metatool"]
    config = EvalConfig(default_bench_dir(), names, split=args.split, progress=False)
    settings = Settings.from_env(os.environ)
    encoder = encoder_from_settings(settings)
    if encoder is None:
        sys.stderr.write("empty_evidence needs an encoder\n")
        return 2
    from tool_selector.offline.evaluation.cli import _static  # noqa: PLC0415

    glossary = default_glossary() if settings.glossary else None
    steps = SHIPPED_STEPS if settings.multi_step else None
    ranker._verdicts = _spy(ranker._verdicts)
    print(
        f"# command: python -m loadtests.empty_evidence --split {args.split} "
        + " ".join(f"--dataset {n}" for n in names)
    )
    print("# evidence: the first model's best / every model's (unshifted), beside its floor")
    for data in load_all(config):
        evaluator = Evaluator(
            encoder,
            config,
            [data],
            _static(settings),
            multilingual_from_settings(settings),
            glossary=glossary,
            steps=steps,
        )
        gold = {q.text: q.gold for q in pick_queries(data.queries, args.split, None)}
        rows = {"service": Empties(), "lexical": Empties(), "cold": Empties()}
        _watch(evaluator.selector, gold, rows["service"])
        _watch(evaluator.lexical, gold, rows["lexical"])
        if evaluator.cold is not None:
            _watch(evaluator.cold, gold, rows["cold"])
        evaluator.evaluate(data)
        for path, empties in rows.items():
            print("\n".join(_lines(data.name, path, empties)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
