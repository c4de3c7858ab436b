"""A request behind a leading tag, in a long message: is it still read as the request?

``PYTHONPATH=service:. python -m loadtests.tagged_requests [--rank]``

People open a message with a label: a ticket id ("[JIRA-123] Get the ..."), a marker
("(urgent) Find ..."), a mention ("@bot compute ..."), a channel ("#ops restart ...").
This benchmark puts each of ``TAGS`` in front of the bench sets' sentence requests with gold
(``--datasets``, the ``--split`` half, as written: no other decoration) and the requests of
``long_pastes.ISSUE_REQUESTS``, then wraps them in ``long_pastes``' generated pastes (the
same paste for a request whatever its tag), at ``--placements`` of ``--sizes`` KB messages.
Each message is decoded by the service's own ``Decoder``, as a Context Gateway v0.4.3
pre-filter body (compress path, ``max_tools: 25``). Printed per tag and placement: how many
of the messages are **read as the request** (``request_found``, the request's own words in
the pattern ranked) and how many get the **same pattern** as the untagged request in the
same paste; with ``--rank``, the gold's R@5 and R@25 through a selector built as the
service builds it (``long_pastes.InProcess``: warm, every encoder with the catalog, no
query cache), and the request alone (no tag, no paste) as the bar. ``--misses`` lists what
was not read as the request. Results: docs/long-patterns.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtests.long_messages import SENTENCE_CATEGORIES
from loadtests.long_pastes import ISSUE_REQUESTS, InProcess, catalog, message
from tool_selector.offline.evaluation.dataset import (
    BenchQuery,
    default_bench_dir,
    load_dataset,
    pick_queries,
)

#: What people put in front of a request: ids, markers, mentions, channels, two at once;
#: for comparison "TODO:" and the proxy harness's own "[60ec448f] QUERY:" (they end in a
#: colon: an opening, read before) and "> " (a quote of someone else's words: pasted).
TAGS = [
    "",
    "[a1b2c3] ",
    "[JIRA-123] ",
    "(urgent) ",
    "@bot ",
    "#ops ",
    "<@U024BE7LH> ",
    "[PROJ-7] @bot ",
    "TODO: ",
    "[60ec448f] QUERY: ",
    "[60ec448f] QUERY: [a1b2c3] ",
    "> ",
]


@dataclass(frozen=True)
class Read:
    dataset: str
    tag: str
    placement: str
    kb: int
    query: BenchQuery
    kind: str
    pattern: str
    names: tuple[str, ...]


def requests_of(name: str, split: str, limit: int) -> list[BenchQuery]:
    """Up to ``limit`` sentence queries with gold of ``name`` as written, and the issue's."""
    data = load_dataset(default_bench_dir(), name)
    queries = [q for q in data.queries if q.gold and q.category not in SENTENCE_CATEGORIES]
    picked = pick_queries(queries, split, limit)  # type: ignore[arg-type]
    return picked + [
        BenchQuery(f"issue28-{i}", text, (tool["name"],))
        for i, (text, tool) in enumerate(ISSUE_REQUESTS)
    ]


class DecodeOnly:
    """The service's ``Decoder`` alone: the reading, no ranking."""

    def __init__(self) -> None:
        from tool_selector.pipeline.decoding import Decoder  # noqa: PLC0415
        from tool_selector.settings import Settings  # noqa: PLC0415

        self.decoder = Decoder(Settings.from_env(dict(os.environ)))

    def ask(self, text: str, tools: list[dict[str, Any]]) -> tuple[list[str], str, str]:
        from tool_selector_client.wire import COMPRESS_PATH  # noqa: PLC0415

        body = json.dumps({"query": text, "tools": tools[:1], "max_tools": 25}).encode()
        _, ask = self.decoder.decode(body, COMPRESS_PATH)
        return [], str(ask.pattern_kind), ask.pattern

    def warm(self, tools: list[dict[str, Any]]) -> None:
        pass


class Ranked(InProcess):
    """``long_pastes.InProcess``: the reading and the names, as ``DecodeOnly`` says them,
    once every encoder has the catalog (``warm`` stops at the first hybrid answer, which may
    be the first model's alone while the second embeds: runs would then differ by load)."""

    def warm(self, tools: list[dict[str, Any]], timeout: float = 900) -> None:
        from tool_selector.settings import Settings  # noqa: PLC0415
        from tool_selector_client.wire import COMPRESS_PATH  # noqa: PLC0415

        super().warm(tools, timeout)
        models = 2 if Settings.from_env(dict(os.environ)).second_encoder else 1
        body = json.dumps({"query": "warm up", "tools": tools, "max_tools": 25}).encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            made = self.selector.select(self.decoder.decode(body, COMPRESS_PATH)[1]).provenance
            if made.embedded == "complete" and len(made.encoders) >= models:
                return
            time.sleep(0.5)
        raise TimeoutError("the catalog was never embedded by every encoder")

    def ask(self, text: str, tools: list[dict[str, Any]]) -> tuple[list[str], str, str]:  # type: ignore[override]
        names, _, reading, pattern, _ = super().ask(text, tools)
        return names, reading, pattern


def run(args: argparse.Namespace) -> tuple[list[Read], dict[tuple[str, str], list[str]]]:
    service: DecodeOnly | Ranked = (
        Ranked({"TOOL_SELECTOR_QUERY_CACHE_SIZE": "0"}) if args.rank else DecodeOnly()
    )
    reads: list[Read] = []
    alone: dict[tuple[str, str], list[str]] = {}
    for name in args.datasets:
        queries = requests_of(name, args.split, args.queries)
        tools = catalog(name, args.tools, queries)
        service.warm(tools)
        for q in queries:
            if args.rank:
                alone[(name, q.id)] = service.ask(q.text, tools)[0]
            for kb in args.sizes:
                for placement in args.placements:
                    seed = f"{args.seed}:{name}:{q.id}:{placement}:{kb}"
                    for tag in args.tags:
                        text, _ = message(f"{tag}{q.text}", placement, kb, seed)
                        names, kind, said = service.ask(text, tools)
                        reads.append(Read(name, tag, placement, kb, q, kind, said, tuple(names)))
    return reads, alone


def found(read: Read) -> bool:
    """Read as the request: its own words (the paste's lead sentence may come with them)."""
    return read.kind == "request_found" and read.query.text in read.pattern


def hit(names: Sequence[str], query: BenchQuery, k: int) -> bool:
    return bool(set(names[:k]) & set(query.gold))


def report(
    reads: Sequence[Read], alone: dict[tuple[str, str], list[str]], args: argparse.Namespace
) -> str:
    """Per tag and placement: read as the request, the same pattern as untagged, and with
    ``--rank`` R@5 / R@25 (all sizes together)."""
    untagged = {(r.dataset, r.query.id, r.placement, r.kb): r.pattern for r in reads if not r.tag}
    cells: dict[tuple[str, str], list[Read]] = defaultdict(list)
    for r in reads:
        cells[(r.tag, r.placement)].append(r)
    what = "read as the request / same pattern as untagged" + (" / R@5 / R@25" if args.rank else "")
    rows = [
        f"{what}, per placement:",
        "",
        "| tag | " + " | ".join(args.placements) + " |",
        "|---|" + "---:|" * len(args.placements),
    ]
    for tag in args.tags:
        row = []
        for placement in args.placements:
            group = cells[(tag, placement)]
            same = sum(
                r.pattern == untagged.get((r.dataset, r.query.id, r.placement, r.kb)) for r in group
            )
            cell = f"{sum(map(found, group))}/{len(group)} / {same}/{len(group)}"
            if args.rank:
                r5 = sum(hit(r.names, r.query, 5) for r in group)
                r25 = sum(hit(r.names, r.query, 25) for r in group)
                cell += f" / {100 * r5 / len(group):.1f} / {100 * r25 / len(group):.1f}"
            row.append(cell)
        rows.append(f"| `{tag.strip() or '(none)'}` | " + " | ".join(row) + " |")
    if args.rank:
        keys = {(r.dataset, r.query.id): r.query for r in reads}
        r5 = sum(hit(alone[k], q, 5) for k, q in keys.items())
        r25 = sum(hit(alone[k], q, 25) for k, q in keys.items())
        n = len(keys)
        rows.append(
            f"\nthe request alone (no tag, no paste): R@5 {100 * r5 / n:.1f}, "
            f"R@25 {100 * r25 / n:.1f} ({n} requests)"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["bfcl", "metatool", "agent"])
    parser.add_argument("--tools", type=int, default=150)
    parser.add_argument("--queries", type=int, default=24, help="per data set")
    parser.add_argument("--split", default="test", choices=["dev", "test", "all"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20])
    parser.add_argument("--placements", nargs="+", default=["start"])
    parser.add_argument("--tags", nargs="+", default=TAGS)
    parser.add_argument("--rank", action="store_true", help="rank too (loads the models)")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--misses", action="store_true", help="list what was not found")
    args = parser.parse_args(argv)
    if "" not in args.tags:
        args.tags = ["", *args.tags]
    print(
        "command: PYTHONPATH=service:. python -m loadtests.tagged_requests "
        + " ".join(argv if argv is not None else sys.argv[1:])
    )
    finder = Path(__file__).parents[1] / "service" / "tool_selector" / "ranking"
    digest = hashlib.sha256((finder / "request_parts.py").read_bytes()).hexdigest()[:12]
    reads, alone = run(args)
    print(
        f"\n{', '.join(args.datasets)}; {args.split} split; {args.sizes} KB at "
        f"{', '.join(args.placements)}; request_parts.py sha256 {digest}; "
        f"load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())}\n"
    )
    print(report(reads, alone, args))
    if args.misses:
        for r in reads:
            if r.tag and not found(r):
                print(
                    f"MISS {r.dataset} {r.placement} {r.kb}KB {r.tag!r} [{r.kind}] "
                    f"{r.query.text[:80]!r} -> {r.pattern[:160]!r}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
