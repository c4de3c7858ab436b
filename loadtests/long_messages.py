"""A request inside a long message: is the right tool still in the 25 the pre-filter keeps?

``PYTHONPATH=service:. python -m loadtests.long_messages``

Context Gateway v0.4.2-v0.5.1 post the user's whole last message as ``query`` with
``max_tools: 25`` and forward only the tools we return. This benchmark wraps real requests
of the bench sets (the six bench sets and ``eval/agent``; sentence-like queries with gold,
the ``--split`` half) in pasted material generated here, deterministically: application
logs with Python and Java tracebacks, Markdown and configuration documentation (with its
own "you can", imperative steps and FAQ questions), pretty-printed JSON and CSV. The
request goes at the start, the middle or the end of a message of 3, 8 or 20 KB. Each set
is a catalog of ``--tools`` tools (150) sampled deterministically, holding every gold.

Every message is posted to a real service on loopback (the compress path, as the proxy
sends it: ``max_tools: 25``) once the catalog is warm (embedded, hybrid answers), and the
benchmark prints R@5 and R@25 per placement and size, "kept" (the share of the requests
whose gold the request alone gets into the 25 that still get it there, wrapped), and the
client-side latency (p50 and p99) per size. ``--find-request off`` serves with
``TOOL_SELECTOR_FIND_REQUEST=false`` (the positional cut alone: the "before"); the default
runs both, on the same machine, one after the other. ``--huge`` also times a few 1 MB
messages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from tests.support import start_service

from tool_selector.offline.evaluation.dataset import (
    BenchQuery,
    default_bench_dir,
    load_dataset,
    pick_queries,
)

COMPRESS = "/api/compress/tool-discovery/"
PLACEMENTS = ("start", "middle", "end")
SIZES_KB = (3, 8, 20)
#: Categories of queries a person writes as a sentence (the agent set's keyword and
#: tool-name queries are searches a model types, not messages).
SENTENCE_CATEGORIES = {"keyword", "tool_name"}

# --- pasted material, generated ------------------------------------------------------------

_SERVICES = ["orders", "billing", "auth", "search", "inventory", "notifications", "gateway"]
_PY_FUNCS = ["handle_request", "process_invoice", "load_customer", "validate_payload", "run"]
_JAVA_CLASSES = ["OrderService", "PaymentClient", "CustomerRepository", "InvoiceJob"]
_DOC_SENTENCES = [
    "The service reads its configuration once at startup.",
    "Each worker keeps a pool of connections open to the database.",
    "Failed calls are retried with exponential backoff until the deadline passes.",
    "Requests that arrive while every worker is busy wait in a bounded queue.",
    "Once the queue is full, new requests are refused with a 503.",
    "You can override any of these settings with an environment variable.",
    "If you run more than one replica, put a shared cache in front of them.",
    "Logs are written as JSON lines to standard output.",
    "Make sure the clock of every host is synchronised before you enable signing.",
    "Note that the cache is cleared on every restart.",
    "See the operations guide for how to rotate the signing keys.",
    "Use the admin console to inspect the queue while a migration runs.",
]


def _stamp(rng: random.Random, i: int) -> str:
    return f"2026-03-14 09:{(i // 60) % 60:02d}:{i % 60:02d},{rng.randrange(1000):03d}"


def python_log(rng: random.Random, lines: int) -> str:
    """An application log with INFO/WARNING/ERROR lines and a Python traceback."""
    out: list[str] = []
    for i in range(lines):
        svc, lvl = rng.choice(_SERVICES), rng.choice(["INFO"] * 6 + ["WARNING", "ERROR", "DEBUG"])
        if lvl == "ERROR" and rng.random() < 0.5:
            func = rng.choice(_PY_FUNCS)
            out += [
                f"{_stamp(rng, i)} ERROR [app.{svc}] Task {func}[{rng.getrandbits(32):08x}] "
                "raised unexpected: KeyError('customer_id')",
                "Traceback (most recent call last):",
                f'  File "/srv/app/{svc}/worker.py", line {rng.randrange(20, 400)}, in {func}',
                "    result = self.handler(payload, timeout=self.timeout)",
                f'  File "/srv/app/{svc}/handlers.py", line {rng.randrange(20, 400)}, in __call__',
                '    customer = payload["customer_id"]',
                "KeyError: 'customer_id'",
            ]
        elif lvl == "WARNING":
            out.append(
                f"{_stamp(rng, i)} WARNING [app.{svc}] slow call to {svc}-db: "
                f"{rng.randrange(100, 900)} ms (threshold 100 ms), please check the pool size"
            )
        else:
            out.append(
                f"{_stamp(rng, i)} {lvl} [uvicorn.access] 10.0.{rng.randrange(9)}."
                f'{rng.randrange(250)}:{rng.randrange(40000, 60000)} - "POST /api/v1/{svc} '
                f'HTTP/1.1" {rng.choice([200, 200, 201, 404, 500])}'
            )
    return "\n".join(out)


def java_log(rng: random.Random, lines: int) -> str:
    """A Spring Boot log with a Java stack trace."""
    out: list[str] = []
    for i in range(lines):
        cls = rng.choice(_JAVA_CLASSES)
        stamp = f"2026-03-14T10:{(i // 60) % 60:02d}:{i % 60:02d}.{rng.randrange(1000):03d}Z"
        if rng.random() < 0.15:
            out += [
                f"{stamp} ERROR 4242 --- [nio-8080-exec-{rng.randrange(1, 9)}] "
                f"c.a.orders.{cls} : Request processing failed; you may need to retry",
                'java.lang.NullPointerException: Cannot invoke "String.length()" because '
                '"name" is null',
                f"\tat com.acme.orders.{cls}.validate({cls}.java:{rng.randrange(40, 300)})",
                f"\tat com.acme.orders.{cls}.handle({cls}.java:{rng.randrange(40, 300)})",
                "\tat org.springframework.web.servlet.FrameworkServlet.service("
                "FrameworkServlet.java:897)",
                f"\t... {rng.randrange(20, 60)} more",
            ]
        else:
            out.append(
                f"{stamp}  INFO 4242 --- [nio-8080-exec-{rng.randrange(1, 9)}] c.a.orders.{cls}"
                f" : Completed order {rng.randrange(10**6)} in {rng.randrange(2, 90)} ms"
            )
    return "\n".join(out)


def _sentence(rng: random.Random) -> str:
    return rng.choice(_DOC_SENTENCES)


def documentation(rng: random.Random, sections: int) -> str:
    """Markdown documentation: headings, prose (with "you"), steps, code, a table, a FAQ."""
    out: list[str] = []
    for s in range(sections):
        svc = rng.choice(_SERVICES)
        out += [
            f"## {svc.title()} service",
            "",
            f"{_sentence(rng)} {_sentence(rng)} You can override any of these settings with "
            f"an environment variable, and you should restart the {svc} workers afterwards.",
            "",
            f"1. Install the {svc} package with `pip install acme-{svc}`.",
            f"2. Set `{svc.upper()}_TIMEOUT` to the number of seconds a call may take.",
            "3. Run the migrations before the first start.",
            "",
            "```yaml",
            f"{svc}:",
            f"  timeout: {rng.randrange(1, 30)}s",
            f"  pool_size: {rng.randrange(2, 64)}",
            "```",
            "",
            "| setting | default | meaning |",
            "|---|---|---|",
            f"| `{svc}.timeout` | 5s | how long one call may take |",
            "",
        ]
        if s % 2:
            out += [
                f"**How do I rotate the {svc} keys?** Use the admin console; the old key keeps "
                "working for an hour.",
                "",
            ]
    return "\n".join(out)


def json_dump(rng: random.Random, items: int) -> str:
    """A pretty-printed API answer."""
    rows = [
        {
            "id": f"ord_{rng.getrandbits(40):010x}",
            "status": rng.choice(["paid", "pending", "refunded"]),
            "customer": {"name": rng.choice(["Ada Lovelace", "Grace Hopper"]), "tier": "gold"},
            "items": [{"sku": f"SKU-{rng.randrange(9999):04d}", "qty": rng.randrange(1, 5)}],
            "note": "customer asked to please deliver after 5pm",
        }
        for _ in range(items)
    ]
    return json.dumps({"data": rows, "next": None}, indent=2)


def csv_dump(rng: random.Random, rows: int) -> str:
    """A CSV export."""
    out = ["date,region,product,units,revenue,comment"]
    for _ in range(rows):
        out.append(
            f"2026-0{rng.randrange(1, 10)}-{rng.randrange(10, 29)},"
            f"{rng.choice(['EMEA', 'APAC', 'NA'])},{rng.choice(['Pro', 'Team', 'Free'])},"
            f"{rng.randrange(1, 500)},{rng.randrange(100, 90000)}.00,"
            f"{rng.choice(['', 'renewal', 'please check'])}"
        )
    return "\n".join(out)


_MATERIAL: list[tuple[str, Callable[[random.Random, int], str], str]] = [
    ("python log", python_log, "Here is the log from this morning:"),
    ("java log", java_log, "This is what the server printed:"),
    ("docs", documentation, "For reference, the docs say:"),
    ("json", json_dump, "The API returned this:"),
    ("csv", csv_dump, "Here's the export:"),
]
_LEADS = ["", "", "", "What I need now: ", "Anyway, ", "OK so - "]


def material(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of pasted material of one or two kinds, each with the
    sentence a person writes before pasting it."""
    out: list[str] = []
    while sum(len(x) for x in out) < chars:
        _, make, intro = rng.choice(_MATERIAL)
        out.append(f"{intro}\n\n{make(rng, 400)}\n")
    return "\n".join(out)[:chars].rsplit("\n", 1)[0]


def message(request: str, placement: str, kb: int, seed: str) -> str:
    """``request`` placed in about ``kb`` KB of generated material, deterministically."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    size = kb * 1000 - len(request)
    lead = rng.choice(_LEADS)
    ask = lead + (request[0].lower() + request[1:] if lead.endswith(", ") else request)
    if placement == "start":
        return f"{ask}\n\n{material(rng, size)}"
    if placement == "end":
        return f"{material(rng, size)}\n\n{ask}"
    return f"{material(rng, size // 2)}\n\n{ask}\n\n{material(rng, size // 2)}"


# --- the run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    dataset: str
    placement: str
    kb: int
    query: BenchQuery
    text: str


@dataclass
class Outcome:
    case: Case
    names: list[str]
    seconds: float


def catalog(
    name: str, size: int, split: str, limit: int
) -> tuple[list[dict[str, Any]], list[BenchQuery]]:
    """``size`` tools of ``name`` (as the v0.4.3 pre-filter sends them) holding the gold of
    up to ``limit`` sentence queries of ``split``; both chosen by hash, so stable."""
    data = load_dataset(default_bench_dir(), name)
    queries = [q for q in data.queries if q.gold and q.category not in SENTENCE_CATEGORIES]
    queries = pick_queries(queries, split, limit)  # type: ignore[arg-type]
    gold = {g for q in queries for g in q.gold}
    by_hash = sorted(data.tools, key=lambda t: hashlib.sha256(t.name.encode()).digest())
    keep = [t for t in data.tools if t.name in gold]
    keep += [t for t in by_hash if t.name not in gold][: max(0, size - len(keep))]
    wire = [
        {"name": t.name, "description": t.description or "", "parameters": t.definition or {}}
        for t in keep
    ]
    return wire, queries


def post(
    client: httpx.Client, url: str, text: str, tools: list[dict[str, Any]]
) -> tuple[list[str], float]:
    body = {"query": text, "tools": tools, "max_tools": 25, "source": "gateway:anthropic"}
    began = time.perf_counter()
    r = client.post(url + COMPRESS, json=body, timeout=60)
    took = time.perf_counter() - began
    if r.status_code != 200:
        raise RuntimeError(f"{r.status_code}: {r.text[:300]}")
    return list(r.json()["data"]["relevant_tools"]), took


def warm(client: httpx.Client, url: str, tools: list[dict[str, Any]], timeout: float = 600) -> None:
    """Post the catalog as the proxy does until every encoder has embedded it."""
    body = {"query": "warm up", "tools": tools, "max_tools": 25, "source": "gateway:anthropic"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.post(url + COMPRESS, json=body, timeout=60)
        if r.status_code == 200 and r.headers.get("x-tool-selector-embedded") == "complete":
            return
        time.sleep(0.5)
    raise TimeoutError("the catalog never answered with every encoder's vectors")


def run(args: argparse.Namespace, find_request: bool) -> list[Outcome]:
    env = {
        "TOOL_SELECTOR_FIND_REQUEST": "true" if find_request else "false",
        # a slow answer is measured, not refused (the proxy's own timeout is 5-10 s)
        "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "30",
    }
    if args.no_query_cache:  # every message pays its own embedding, as a new one does
        env["TOOL_SELECTOR_QUERY_CACHE_SIZE"] = "0"
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        service = start_service(Path(tmp), env)
        try:
            with httpx.Client() as client:
                for name in args.datasets:
                    tools, queries = catalog(name, args.tools, args.split, args.queries)
                    warm(client, service.url, tools)
                    for q in queries:  # the request alone: what a paste can at best leave
                        names, took = post(client, service.url, q.text, tools)
                        outcomes.append(Outcome(Case(name, "alone", 0, q, q.text), names, took))
                    for kb in args.sizes:
                        for placement in args.placements:
                            for q in queries:
                                text = message(
                                    q.text, placement, kb, f"{name}:{q.id}:{placement}:{kb}"
                                )
                                case = Case(name, placement, kb, q, text)
                                names, took = post(client, service.url, text, tools)
                                outcomes.append(Outcome(case, names, took))
                    if args.huge:
                        outcomes += huge(client, service.url, tools, queries[: args.huge])
        finally:
            service.stop()
    return outcomes


def huge(
    client: httpx.Client, url: str, tools: list[dict[str, Any]], queries: Sequence[BenchQuery]
) -> list[Outcome]:
    """1 MB messages, the request in the middle."""
    out = []
    for q in queries:
        text = message(q.text, "middle", 1000, f"huge:{q.id}")
        names, took = post(client, url, text, tools)
        out.append(Outcome(Case("huge", "middle", 1000, q, text), names, took))
    return out


def recall(outcomes: Sequence[Outcome], k: int) -> float:
    hits = [
        len(set(o.names[:k]) & set(o.case.query.gold)) / len(o.case.query.gold) for o in outcomes
    ]
    return 100 * statistics.fmean(hits) if hits else float("nan")


def kept(outcomes: Sequence[Outcome]) -> float:
    """Share (%) of requests with a gold tool in the 25 returned."""
    hits = [bool(set(o.names[:25]) & set(o.case.query.gold)) for o in outcomes]
    return 100 * statistics.fmean(hits) if hits else float("nan")


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def table(label: str, outcomes: Sequence[Outcome], args: argparse.Namespace) -> str:
    """R@5 / R@25 per placement and size, then latency per size."""
    head = "| " + label + " | " + " | ".join(f"{p} R@5 / R@25 / kept" for p in args.placements)
    rows = [head + " |", "|---|" + "---:|" * len(args.placements)]
    alone_kept = {
        (o.case.dataset, o.case.query.id)
        for o in outcomes
        if o.case.placement == "alone" and set(o.names[:25]) & set(o.case.query.gold)
    }
    for kb in args.sizes:
        cells = []
        for p in args.placements:
            sel = [o for o in outcomes if o.case.kb == kb and o.case.placement == p]
            base = [o for o in sel if (o.case.dataset, o.case.query.id) in alone_kept]
            cells.append(f"{recall(sel, 5):.1f} / {recall(sel, 25):.1f} / {kept(base):.1f}")
        rows.append(f"| {kb} KB | " + " | ".join(cells) + " |")
    alone = [o for o in outcomes if o.case.placement == "alone"]
    rows.append(f"| request alone | {recall(alone, 5):.1f} / {recall(alone, 25):.1f} |")
    rows += ["", "| size | requests | p50 ms | p99 ms | max ms |", "|---|---:|---:|---:|---:|"]
    for kb in [0, *args.sizes, 1000]:
        took = [o.seconds * 1000 for o in outcomes if o.case.kb == kb]
        if took:
            rows.append(
                f"| {f'{kb} KB' if kb else 'request alone'} | {len(took)} | "
                f"{quantile(took, 0.5):.1f} | "
                f"{quantile(took, 0.99):.1f} | {max(took):.1f} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["bfcl", "metatool", "agent"])
    parser.add_argument("--tools", type=int, default=150)
    parser.add_argument("--queries", type=int, default=24, help="per data set")
    parser.add_argument("--split", default="test", choices=["dev", "test", "all"])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES_KB))
    parser.add_argument("--placements", nargs="+", default=list(PLACEMENTS))
    parser.add_argument("--find-request", choices=["on", "off", "both"], default="both")
    parser.add_argument("--huge", type=int, default=0, help="1 MB messages per data set")
    parser.add_argument("--misses", action="store_true", help="print the requests missed at 25")
    parser.add_argument(
        "--no-query-cache",
        action="store_true",
        help="serve with TOOL_SELECTOR_QUERY_CACHE_SIZE=0 (every pattern embedded)",
    )
    args = parser.parse_args(argv)
    print(
        "command: PYTHONPATH=service:. python -m loadtests.long_messages "
        + " ".join(sys.argv[1:] if argv is None else argv)
    )
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.find_request]
    for mode in modes:
        outcomes = run(args, mode)
        label = "find request" if mode else "positional cut"
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"\n{label}: {', '.join(args.datasets)}; {args.tools} tools; {args.split} split; "
            f"load average after: {load}\n"
        )
        print(table(label, outcomes, args))
        for name in args.datasets if len(args.datasets) > 1 else []:
            print(f"\n{name}\n")
            print(
                table(label, [o for o in outcomes if o.case.dataset == name], args).split("\n\n")[0]
            )
        if args.misses:
            for o in outcomes:
                if not set(o.names[:25]) & set(o.case.query.gold):
                    case = o.case
                    print(f"MISS {case.dataset} {case.placement} {case.kb}KB: {case.query.text!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
