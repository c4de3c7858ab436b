"""R@k of the same needs asked in English and in other languages (``eval/multilingual``).

``python -m tool_selector.offline.evaluation.multilingual [--split test]`` ranks every need of
``eval/multilingual/queries.jsonl`` (one line: ``{"id", "gold", "en", "zh", "ja", "es",
"de", ...}``) over the English agent catalog (``eval/agent/tools.jsonl``) as the service
answers it (warm catalog), with the English model alone (what the service did before the
multilingual arm), with the multilingual arm alone (as it shipped before the glossary) and
as the service ranks now (the arm and the glossary, ``ranking/glossary.py``), and prints per
language R@k, the ratio to the English originals' R@k, and how many requests read as foreign
(``ranking/language.py``). Split: ``dataset.split_of(id)``; tune on dev, report test.

``--paths`` ranks the same needs on each of the service's three paths instead (``hybrid``:
warm, the arm and the glossary; ``static``: a catalog seen for the first time, answered from
the static arm before any tool vector is embedded; ``lexical``: ``TOOL_SELECTOR_ENCODER=none``)
and prints per language R@k and how many answers were empty (an empty answer makes a proxy
forward every tool).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Encoder
from tool_selector.offline.evaluation.dataset import (
    REPO_ROOT,
    Split,
    default_bench_dir,
    load_dataset,
    split_of,
)
from tool_selector.offline.evaluation.metrics import recall_at
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import MULTILINGUAL_LEXICAL, Rules, multilingual_params_of
from tool_selector.ranking.glossary import Glossary, default_glossary
from tool_selector.ranking.language import reads_foreign
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

NEEDS_FILE = REPO_ROOT / "eval" / "multilingual" / "queries.jsonl"
LANGUAGES = ("en", "zh", "ja", "es", "de")


@dataclass(frozen=True, slots=True)
class Need:
    """One need: its gold tool names and its text in each language."""

    id: str
    gold: tuple[str, ...]
    texts: dict[str, str]


@dataclass(frozen=True, slots=True)
class LanguageScore:
    """R@k of one language's requests, and how many of them read as foreign."""

    language: str
    recall: float
    foreign: int
    requests: int
    empty: int = 0


def load_needs(path: Path = NEEDS_FILE, split: Split = "all") -> list[Need]:
    """The needs of ``split`` (every language present on every line)."""
    needs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            need = Need(str(row["id"]), tuple(row["gold"]), {x: row[x] for x in LANGUAGES})
            if split == "all" or split_of(need.id) == split:
                needs.append(need)
    return needs


def score(
    selector: Selector, tools: list[Tool], needs: Sequence[Need], k: int = 5
) -> list[LanguageScore]:
    """Per language, the mean R@k of the service's answers (``SearchRequest``, ``top_k=k``)
    and how many were empty."""
    out = []
    for language in LANGUAGES:
        total, empty = 0.0, 0
        for need in needs:
            request = SearchRequest(pattern=need.texts[language], tools=tools, top_k=k)
            names = selector.select(request).ranking.names
            total += recall_at(names, need.gold, k)
            empty += not names
        foreign = sum(reads_foreign(n.texts[language]) for n in needs)
        recall = 100 * total / max(len(needs), 1)
        out.append(LanguageScore(language, recall, foreign, len(needs), empty))
    return out


def table(columns: Sequence[Sequence[LanguageScore]], labels: Sequence[str]) -> str:
    """The markdown table of docs/quality.md: R@k of each selector, with its ratio to its
    own English originals."""
    head = "| language | read as foreign | " + " | ".join(f"R@5 {x} | ratio" for x in labels)
    lines = [head + " |", "|---|---|" + "---|---|" * len(labels)]
    for row in zip(*columns, strict=True):
        cells = [
            f"{s.recall:.1f} | {_ratio(s.recall, col[0].recall)}"
            for s, col in zip(row, columns, strict=True)
        ]
        lines.append(
            f"| {row[0].language} | {row[-1].foreign}/{row[-1].requests} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def path_table(columns: Sequence[Sequence[LanguageScore]], paths: Sequence[str]) -> str:
    """The markdown table of ``--paths``: R@k and empty answers of each path per language."""
    head = "| language | " + " | ".join(f"R@5 {p} | empty {p}" for p in paths)
    lines = [head + " |", "|---|" + "---|---|" * len(paths)]
    for row in zip(*columns, strict=True):
        cells = [f"{s.recall:.1f} | {s.empty}/{s.requests}" for s in row]
        lines.append(f"| {row[0].language} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ratio(value: float, english: float) -> str:
    return f"{100 * value / english:.0f}%" if english else "-"


#: The columns: what the service did before each step, and now.
LABELS = ("English model only", "multilingual arm", "arm and glossary")
#: The lexical share the arm shipped with before the glossary (tuned without a gloss).
ARM_ALONE_LEXICAL = 0.25


def _selectors(settings: Settings, lexical: float) -> list[Selector]:
    """The English-only selector, the multilingual arm without the glossary (as shipped
    before it) and the service as configured now (arm and glossary); one shared cache."""
    from tool_selector.embeddings.factory import (  # noqa: PLC0415
        encoder_from_settings,
        multilingual_from_settings,
    )

    encoder: Encoder | None = encoder_from_settings(settings)
    cache = MemoryCache(1 << 30)
    english = Selector(encoder=encoder, cache=cache, embed_deadline=math.inf)
    arm = multilingual_from_settings(settings) or multilingual_from_settings(
        Settings(encoder=settings.encoder, multilingual=True)
    )

    def with_arm(share: float, glossary: Glossary | None) -> Selector:
        return Selector(
            encoder=encoder,
            cache=cache,
            embed_deadline=math.inf,
            multilingual=arm,
            rules=Rules(multilingual=multilingual_params_of(english.rules.hybrid, share)),
            glossary=glossary,
        )

    return [english, with_arm(ARM_ALONE_LEXICAL, None), with_arm(lexical, default_glossary())]


#: The service's ranking paths, in the order ``--paths`` prints them.
PATHS = ("hybrid", "static", "lexical")


def _path_selectors(settings: Settings) -> list[Selector]:
    """The service's three paths as the endpoint has them (``PATHS``): warm with the arm and
    the glossary; a catalog seen for the first time (``runner.cold_selector``: nothing
    embedded, the arm attached but without tool vectors, as on a first request); lexical
    (no model, no arm: ``TOOL_SELECTOR_ENCODER=none``), each with the glossary."""
    from tool_selector.embeddings.factory import static_from_settings  # noqa: PLC0415
    from tool_selector.offline.evaluation.runner import cold_selector  # noqa: PLC0415

    service = _selectors(settings, MULTILINGUAL_LEXICAL)[-1]
    static = static_from_settings(settings) or static_from_settings(Settings())
    if static is None:
        raise SystemExit("the static table is off or missing: --paths needs it")
    cold = cold_selector(service, static)
    cold.multilingual = service.multilingual
    return [service, cold, Selector(encoder=None, glossary=service.glossary)]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the per-language table for one split."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=("dev", "test", "all"), default="test")
    p.add_argument(
        "--lexical",
        type=float,
        default=MULTILINGUAL_LEXICAL,
        help="share of the lexical half non-English patterns keep (multilingual_params_of)",
    )
    p.add_argument("--needs", type=Path, default=NEEDS_FILE)
    p.add_argument(
        "--paths",
        action="store_true",
        help="rank on each ranking path (hybrid, static, lexical) and count empty answers",
    )
    args = p.parse_args(argv)
    needs = load_needs(args.needs, args.split)
    tools = list(load_dataset(default_bench_dir(), "agent").tools)
    if args.paths:
        paths = _path_selectors(Settings.from_env(os.environ))
        sys.stdout.write(path_table([score(s, tools, needs) for s in paths], PATHS) + "\n")
        return 0
    selectors = _selectors(Settings.from_env(os.environ), args.lexical)
    columns = [score(s, tools, needs) for s in selectors]
    sys.stdout.write(table(columns, LABELS) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
