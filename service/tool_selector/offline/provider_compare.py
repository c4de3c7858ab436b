"""What each provider's own tool search would load vs what ours loads: R@5, test split.

Run against a running service (``tool-selector serve``)::

    PYTHONPATH=service python -m tool_selector.offline.provider_compare \\
        --url http://127.0.0.1:8080 --dataset agent --dataset livemcpbench

Every data set's tools are made Anthropic deferred tools; each test query that has a gold
tool is one search. First one search per set, then a wait until the service has embedded
every catalog (its ``/metrics``), as a long-running app's catalogs are (``--cold`` measures
at once: a new catalog is answered by the cold arm while it is embedded). R@5 reads the
first 5 names each searcher loads; "loaded" is the mean number of tools it loads. The run
prints how many of our searches each ranking path answered.

- ``ours``: ``anthropic_tool_result`` through the running service, as an app would call it
  (top_k 5; a fail-open answer counts as what it loads: the keyword pick, or every tool).
- ``anthropic regex``: the documented regex variant emulated: the model's regex taken as
  the query's words (3+ letters, identifiers split, the proxy scorer's stop words out)
  OR-ed, case-insensitive, at most 200 characters (the documented limit), ``re.search``
  over each tool's name, description, argument names and argument descriptions (the text
  the docs say is searched). The order of matches is not documented: tools matching more
  distinct words first, then catalog order (a favourable reading); at most 5 (published
  descriptions of the tool speak of 3 to 5 tools per search).
- ``anthropic bm25``: the BM25 variant emulated: the query as written, BM25 (bm25s, the
  Lucene variant, k1=1.2 b=0.75, one field) over the same text split into words
  (identifiers split), top 5 scoring above 0.
- ``gateway regex``: the same regex over tool names only, as gateways that search deferred
  tools "by regular expression or names" do.

OpenAI's hosted tool search has no documented algorithm, so it has no column.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from tool_selector.offline.evaluation.dataset import (
    BenchQuery,
    Dataset,
    default_bench_dir,
    load_dataset,
    split_of,
)
from tool_selector.offline.evaluation.metrics import recall_at
from tool_selector.offline.evaluation.references import plain_tokens
from tool_selector.ranking.bm25 import LexicalIndex
from tool_selector_client import SEARCH_TOOL_NAME, SelectorClient, anthropic_tool_result
from tool_selector_client.wire import Tool

K = 5
MAX_REGEX_CHARS = 200
COLUMNS = ("ours", "anthropic regex", "anthropic bm25", "gateway regex")
Ranker = Callable[[str], list[str]]
#: Words a model leaves out of a regex it writes (besides the references' stop list).
_NOT_IN_A_REGEX = frozenset(
    """the and for with that this from into your you are was were has have had not but can
    all any use using get set what when where which who how why will would should could
    about please need want some them then than there their its our out""".split()
)


def schema_of(tool: Tool) -> Mapping[str, Any]:
    """The tool's argument schema, whatever provider shape its definition has."""
    d: Mapping[str, Any] = tool.definition or {}
    function = d.get("function")
    inner: Mapping[str, Any] = function if isinstance(function, Mapping) else d
    for key in ("input_schema", "inputSchema", "parameters"):
        schema = inner.get(key)
        if isinstance(schema, Mapping):
            return schema
    return {"type": "object", "properties": {}}


def searched_text(tool: Tool) -> str:
    """Name, description, argument names and argument descriptions, one string."""
    props = schema_of(tool).get("properties")
    args = props.items() if isinstance(props, Mapping) else ()
    parts = [tool.name, tool.description or ""]
    for name, spec in args:
        desc = spec.get("description") if isinstance(spec, Mapping) else None
        parts += [str(name), desc if isinstance(desc, str) else ""]
    return " ".join(parts)


def model_regex(query: str) -> re.Pattern[str] | None:
    """The regex a model would write for ``query``: its words OR-ed, case-insensitive."""
    tokens = dict.fromkeys(plain_tokens(query))
    words = [w for w in tokens if len(w) >= 3 and w not in _NOT_IN_A_REGEX]
    pattern = ""
    for w in words:
        longer = f"{pattern}|{re.escape(w)}" if pattern else re.escape(w)
        if len("(?i)") + len(longer) > MAX_REGEX_CHARS:
            break
        pattern = longer
    return re.compile(f"(?i){pattern}") if pattern else None


def regex_ranker(names: Sequence[str], texts: Sequence[str]) -> Ranker:
    """Tools the model's regex matches, more distinct matched words first, at most ``K``."""

    def rank(query: str) -> list[str]:
        regex = model_regex(query)
        if regex is None:
            return []
        hits = [(len({m.lower() for m in regex.findall(t)}), i) for i, t in enumerate(texts)]
        order = sorted((h for h in hits if h[0] > 0), key=lambda h: (-h[0], h[1]))
        return [names[i] for _, i in order[:K]]

    return rank


def bm25_ranker(names: Sequence[str], texts: Sequence[str]) -> Ranker:
    """BM25 over the searched text, top ``K`` scoring above 0."""
    index = LexicalIndex([plain_tokens(t) for t in texts], ngram_field=False)

    def rank(query: str) -> list[str]:
        scores = index.scores(plain_tokens(query))
        order = sorted(range(len(names)), key=lambda i: -float(scores[i]))
        return [names[i] for i in order[:K] if scores[i] > 0]

    return rank


def deferred(tool: Tool) -> dict[str, Any]:
    """The tool as an Anthropic deferred tool."""
    return {
        "name": tool.name,
        "description": tool.description or "",
        "input_schema": dict(schema_of(tool)),
        "defer_loading": True,
    }


@dataclass
class Column:
    """One searcher's sums over a data set's test queries."""

    recall: float = 0.0
    loaded: int = 0
    fell_back: list[str] = field(default_factory=list)


@dataclass
class Row:
    dataset: str
    tools: int
    queries: int = 0
    columns: dict[str, Column] = field(default_factory=lambda: {c: Column() for c in COLUMNS})


def ours(client: SelectorClient, tools: list[dict[str, Any]]) -> Callable[[str], Any]:
    def rank(query: str) -> Any:
        use = {"id": "toolu_bench", "name": SEARCH_TOOL_NAME, "input": {"query": query}}
        return anthropic_tool_result(client, use, tools)

    return rank


def compare(client: SelectorClient, data: Dataset) -> Row:
    """Every searcher's R@5 and tools loaded on ``data``'s test queries that have gold."""
    names = [t.name for t in data.tools]
    texts = [searched_text(t) for t in data.tools]
    rankers: dict[str, Ranker] = {
        "anthropic regex": regex_ranker(names, texts),
        "anthropic bm25": bm25_ranker(names, texts),
        "gateway regex": regex_ranker(names, names),
    }
    hook = ours(client, [deferred(t) for t in data.tools])
    row = Row(data.name, len(names))
    for q in test_queries(data):
        row.queries += 1
        answer = hook(q.text)
        why = f"{answer.reason} -> {answer.fallback}" if answer.reason else None
        _add(row.columns["ours"], list(answer.names), q.gold, why)
        for column, rank in rankers.items():
            _add(row.columns[column], rank(q.text), q.gold, None)
    return row


def test_queries(data: Dataset) -> list[BenchQuery]:
    """The test split's queries that some tool serves."""
    return [q for q in data.queries if split_of(q.id) == "test" and q.gold]


def metric(url: str, name: str) -> dict[str, float]:
    """Every sample of one metric family on the service's ``/metrics``, by its labels."""
    text = httpx.get(url.rstrip("/") + "/metrics", timeout=10).text
    found = re.findall(rf"^{name}(\{{[^}}]*\}})? (\S+)$", text, re.M)
    return {labels: float(value) for labels, value in found}


def wait_warm(url: str, timeout_s: float) -> None:
    """Until the service has embedded every catalog it was sent (its embedding queue is
    empty and every queued job ended), as a long-running app's catalog is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        jobs = metric(url, "tool_selector_embedding_jobs_total")
        queued = jobs.get('{event="queued"}', 0.0)
        ended = sum(v for k, v in jobs.items() if k != '{event="queued"}')
        if metric(url, "tool_selector_embedding_queue_depth").get("", 0.0) == 0 and ended >= queued:
            return
        time.sleep(5)
    raise SystemExit(f"the service did not finish embedding in {timeout_s:.0f} s")


def _add(column: Column, loaded: list[str], gold: Sequence[str], why: str | None) -> None:
    column.recall += recall_at(loaded, gold, K)
    column.loaded += len(loaded)
    if why is not None:
        column.fell_back.append(why)


def table(rows: Sequence[Row]) -> str:
    """The Markdown table: R@5 and mean tools loaded per search, per column."""
    head = "| set | tools | test queries | " + " | ".join(f"{c} R@5 (loaded)" for c in COLUMNS)
    lines = [head + " |", "|---" * (3 + len(COLUMNS)) + "|"]
    for r in rows:
        n = max(r.queries, 1)
        cells = [f"{c.recall / n:.3f} ({c.loaded / n:.1f})" for c in r.columns.values()]
        lines.append(f"| {r.dataset} | {r.tools} | {r.queries} | " + " | ".join(cells) + " |")
    fell = "; ".join(f"{r.dataset}: {_reasons(r.columns['ours'].fell_back)}" for r in rows)
    return "\n".join(lines) + f"\n\nours failed open (reason -> local answer): {fell}"


def _reasons(whys: Sequence[str]) -> str:
    counts = Counter(whys)
    return ", ".join(f"{n} x {why}" for why, n in counts.most_common()) or "none"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", required=True, help="a running tool-selector service")
    parser.add_argument("--dataset", action="append", help="agent, livemcpbench, ...")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per search")
    parser.add_argument("--cold", action="store_true", help="measure before embedding ends")
    parser.add_argument("--warm-timeout", type=float, default=1800.0, help="seconds")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sets = [load_dataset(default_bench_dir(), n) for n in args.dataset or ["agent", "livemcpbench"]]
    with SelectorClient(args.url, timeout_s=args.timeout) as client:
        for data in sets if not args.cold else ():
            ours(client, [deferred(t) for t in data.tools])(test_queries(data)[0].text)
        if not args.cold:
            wait_warm(args.url, args.warm_timeout)
        before = metric(args.url, "tool_selector_ranking_path_total")
        rows = [compare(client, data) for data in sets]
        after = metric(args.url, "tool_selector_ranking_path_total")
    command = "python -m tool_selector.offline.provider_compare " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    paths = {k: after[k] - before.get(k, 0.0) for k in after if after[k] > before.get(k, 0.0)}
    sys.stdout.write(table(rows) + "\n")
    sys.stdout.write(f"ours by ranking path: {paths}\n")
    sys.stdout.write(f"\n{command}  ({time.perf_counter() - started:.0f} s)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
