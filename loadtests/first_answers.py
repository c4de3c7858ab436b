"""Each real need as a never-seen catalog's first request, over HTTP.

``PYTHONPATH=service:. python -m loadtests.first_answers [--datasets agent ...] [--split test]
[--limit N] [--env KEY=VALUE ...]``.

Issue W asks that the first answers on a new catalog reach 95% of the fully embedded warm
R@5. The eval's `service cold` rows (docs/quality.md) rank them in process, as if the
deadline always or never had room for the shortlist; this runs the real service (loopback,
default settings, no Redis) and sends each real need (``gold`` not empty) of each set's
``--split`` as the first request on a catalog nobody has seen: the set's whole catalog with
a marker of its own after every description (``marker``: characters every tokenizer drops,
so it ranks as the catalog without them; six characters, seven from 4,096 needs on), so no
vector of it is cached anywhere, and its pattern new to the query cache (unless the set
repeats it). After each answer it waits until the catalog's background job is done
(``tool_selector_embedding_queue_depth`` 0 in ``/metrics``), so each first request meets an
idle service, as a new session's first turn does. The warm reference is the same catalog
with one marker of its own, fully embedded first with a pattern of its own (every encoder:
the queue empty, not only ``hybrid`` said), then asked each need after its first answer.

Prints, per set, for all its needs and then for those whose first answer took each path
(``static``: the static arm's answer; ``shortlist``: its leaders read by the models,
``pipeline.shortlist``): the warm and first answers' R@1 / R@5, the first R@5 as a share of
the warm one's, empty answers, and the first answers' latency at the client (p50 / p90 /
max ms); then the needs whose first answer was empty. The models' prediction reads each
marker's six characters too (about 4% of a short tool text). No test asserts its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec
from tests.support import start_service

from loadtests.coldstart import _path
from loadtests.second_encoder import p
from loadtests.shortlist import recalls
from tool_selector.offline.evaluation.dataset import (
    BenchQuery,
    Split,
    default_bench_dir,
    load_dataset,
    pick_queries,
)
from tool_selector_client.wire import SEARCH_PATH

HEADERS = {"content-type": "application/json"}
DEPTH = "tool_selector_embedding_queue_depth "
#: What embeds the warm catalog: no set's need, so each need's pattern is new at its first.
WARM_UP = "the benchmark's own pattern, to embed the warm catalog"


#: Four format characters (Unicode Cf): the models' and the static tables' tokenizers drop
#: them, and so does every word the BM25 index reads, so a description that ends with some
#: ranks as it would without, but is another text to every cache key (tested in
#: ``tests/unit/test_loadtests_first_answers.py``).
INVISIBLE = "\u200b\u200c\u200d\u2060"


def marker(index: int, width: int = 6) -> str:
    """``index`` written in ``INVISIBLE``'s four characters, ``width`` of them (4,096 markers
    at 6; ``marker_width`` says how many a run needs)."""
    if not 0 <= index < 4**width:
        raise ValueError(f"marker {index} needs more than {width} characters")
    return "".join(INVISIBLE[(index >> (2 * k)) & 3] for k in range(width))


def marker_width(markers: int) -> int:
    """The characters each of ``markers`` distinct markers needs (6 at least)."""
    width = 6
    while 4**width < markers:
        width += 1
    return width


def marked(tools: list[dict[str, Any]], mark: str) -> list[dict[str, Any]]:
    """``tools`` (wire JSON) with ``mark`` after every description, the tool's own and its
    definition's function's."""
    out = []
    for sent in tools:
        tool = json.loads(json.dumps(sent))
        for holder in (tool, (tool.get("definition") or {}).get("function") or {}):
            if isinstance(holder.get("description"), str):
                holder["description"] += mark
        out.append(tool)
    return out


def idle(client: httpx.Client, url: str, limit: float = 600.0) -> None:
    """Wait until no catalog embedding job is queued or running."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for line in client.get(url + "/metrics").text.splitlines():
            if line.startswith(DEPTH) and float(line[len(DEPTH) :]) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the embedding queue was not empty within {limit:.0f} s")


def ask(
    client: httpx.Client, url: str, pattern: str, tools: list[dict[str, Any]]
) -> tuple[list[str], str, float]:
    """The answer's names, its path (``coldstart._path``) and the client's ms."""
    body = json.dumps({"pattern": pattern, "top_k": 5, "tools": tools}).encode()
    sent = time.perf_counter()
    r = client.post(url + SEARCH_PATH, content=body, headers=HEADERS)
    ms = 1000 * (time.perf_counter() - sent)
    r.raise_for_status()
    return list(r.json()["selected_names"]), _path(r.headers), ms


@dataclass(frozen=True, slots=True)
class Pair:
    """One need's first answer (its path, recalls, emptiness, client ms) and warm answer."""

    pattern: str
    path: str
    first: tuple[float, float]
    empty: bool
    ms: float
    warm: tuple[float, float]
    warm_empty: bool


def one_set(
    client: httpx.Client, url: str, name: str, split: Split, *, limit: int | None
) -> list[str]:
    """The set's table rows: all its needs, then those of each path the first answers took."""
    data = load_dataset(default_bench_dir(), name)
    queries: list[BenchQuery] = [q for q in pick_queries(data.queries, split, limit) if q.gold]
    tools = [msgspec.to_builtins(t) for t in data.tools]
    width = marker_width(len(queries) + 1)  # the warm catalog's, then one a need
    warm_tools = marked(tools, marker(0, width))
    while ask(client, url, WARM_UP, warm_tools)[1] != "hybrid":
        time.sleep(0.2)
    idle(client, url)
    pairs = []
    for i, q in enumerate(queries, 1):  # first, while the pattern is new to the query cache too
        names, path, took = ask(client, url, q.text, marked(tools, marker(i, width)))
        idle(client, url)
        warm = ask(client, url, q.text, warm_tools)[0]
        pairs.append(
            Pair(
                q.text,
                path,
                recalls(names, q.gold),
                not names,
                took,
                recalls(warm, q.gold),
                not warm,
            )
        )
    groups = {"all": pairs} | {
        path: [x for x in pairs if x.path == path] for path in sorted({x.path for x in pairs})
    }
    rows = [_row(f"{data.name}, {key}", group) for key, group in groups.items()]
    return rows + [
        f"# {data.name}: empty first answer ({x.path}): {x.pattern[:80]!r}"
        for x in pairs
        if x.empty
    ]


def _row(label: str, pairs: list[Pair]) -> str:
    n, ms = len(pairs), [x.ms for x in pairs]

    def pct(values: list[float]) -> float:
        return 100 * sum(values) / n

    warm5, first5 = pct([x.warm[1] for x in pairs]), pct([x.first[1] for x in pairs])
    return (
        f"| {label} | {n} | {pct([x.warm[0] for x in pairs]):.1f} / {warm5:.1f} "
        f"| {pct([x.first[0] for x in pairs]):.1f} / {first5:.1f} "
        f"| {100 * first5 / max(warm5, 1e-9):.1f}% "
        f"| {pct([x.warm_empty for x in pairs]):.1f}% / {pct([x.empty for x in pairs]):.1f}% "
        f"| {statistics.median(ms):.0f} / {p(ms, 0.9):.0f} / {max(ms):.0f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["agent"])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="test")
    parser.add_argument("--limit", type=int, default=None, help="queries a set at most")
    parser.add_argument("--env", nargs="*", default=[], help="KEY=VALUE for the service")
    args = parser.parse_args(argv)
    given = shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    print(f"# command: PYTHONPATH=service:. python -m loadtests.first_answers {given}".rstrip())
    env = {"TOOL_SELECTOR_LOG_LEVEL": "WARNING", **dict(e.split("=", 1) for e in args.env)}
    proc = start_service(Path(tempfile.mkdtemp(prefix="tool-selector-first-")), env, deadline=None)
    print(
        "| set, first answers' path | real needs | warm R@1 / R@5 | first R@1 / R@5 "
        "| first / warm R@5 | empty warm / first | first ms p50 / p90 / max |"
    )
    print("|---|---:|---|---|---:|---|---|")
    try:
        with httpx.Client(timeout=60) as client:
            for name in args.datasets:
                rows = one_set(client, proc.url, name, args.split, limit=args.limit)
                print("\n".join(rows), flush=True)
    finally:
        proc.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
