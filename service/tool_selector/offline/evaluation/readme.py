"""The headline quality table of ``docs/quality.md``, generated from an eval run's JSON
(``reports/quality.json``).

``python -m tool_selector.offline.evaluation.readme`` rewrites the block between
``<!-- quality:start ... -->`` and ``<!-- quality:end -->`` in ``docs/quality.md``;
``--check`` only says (exit 1) whether the block is out of date.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tool_selector.offline.evaluation.report import ABSTAINING, overview

BLOCK = re.compile(r"(<!-- quality:start[^>]*-->\n).*?(<!-- quality:end -->)", re.S)


def table(data: Mapping[str, Any]) -> str:
    """The block's body: R@k (R@1) per ranker and set, then the no-match rows."""
    k, results = data["k"], data["results"]
    lines = [
        f"R@{k} (R@1), k={k}, `{data['split']}` split, whole catalog ranked per query "
        f"(`{data['command']}`, {data['date']}, {data['seconds']:.0f} s):",
        "",
        *overview(results, k),
    ]
    for ranker in (a for a in ABSTAINING if any(a in r["rankers"] for r in results)):
        for key, label in (
            ("empty%", "empty% on real needs"),
            ("abstain%", "abstain% on no-match"),
        ):
            cells = [str(r["rankers"].get(ranker, {}).get(key, "-")) for r in results]
            lines.append(f"| {ranker}: {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def update(text: str, data: Mapping[str, Any]) -> str:
    """``text`` with its quality block replaced by ``table(data)``."""
    if not BLOCK.search(text):
        raise ValueError("no <!-- quality:start --> ... <!-- quality:end --> block")
    return BLOCK.sub(lambda m: m.group(1) + table(data) + m.group(2), text, count=1)


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate (or ``--check``) the quality block of ``docs/quality.md`` from the results."""
    p = argparse.ArgumentParser(prog="python -m tool_selector.offline.evaluation.readme")
    p.add_argument("--results", type=Path, default=Path("reports/quality.json"))
    p.add_argument(
        "--readme", type=Path, default=Path("docs/quality.md"), help="the page to update"
    )
    p.add_argument("--check", action="store_true", help="exit 1 if the block is out of date")
    args = p.parse_args(argv)
    try:
        text = args.readme.read_text(encoding="utf-8")
        fresh = update(text, json.loads(args.results.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"quality readme: {exc}\n")
        return 2
    if args.check:
        return 0 if fresh == text else 1
    args.readme.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
