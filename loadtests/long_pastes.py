"""Many kinds of paste around a request: is the gold the request alone keeps still kept?

``PYTHONPATH=service:. python -m loadtests.long_pastes``

The pre-filter of Context Gateway v0.4.2-v0.5.1 posts the user's whole last message as
``query`` with ``max_tools: 25``. This benchmark wraps real requests of the bench sets (the
sentence queries with gold of ``--datasets``, the ``--split`` half; BFCL's are full of
money, numbers and quoted values) and the requests of ``ISSUE_REQUESTS`` in pastes of sixteen
kinds generated here, deterministically: nginx access logs (IP first), syslog, JSON lines,
``key=value`` (logfmt) logs, CSV, pretty-printed JSON, YAML, Python and Java tracebacks,
unified diffs, Markdown tables, HTML, quoted e-mail threads, chat transcripts and Markdown
documentation (with its own questions and steps). Each
message holds one or two kinds, each after the sentence a person writes before pasting,
with the request at the start, in the middle or at the end, at 3, 8, 20 and 100 KB; a
share of the requests is decorated with what real requests carry (a URL, inline code, a
quoted value, a second opening such as "Unrelated to that log, my actual question:").

Everything runs in process, as the service does it: the body is decoded by the service's
own ``Decoder`` (where the request is found) and ranked by a selector built like the
service's (the bundled encoder, static and multilingual arms), warm (the catalog embedded),
with no query cache, so every message pays its own embedding as a new message does.
Printed per placement and size: **kept**, the requests whose gold the request alone
(decorated, no paste) gets into the 25 that still get it there wrapped, as a share of
those; per size p50 / p99 / max milliseconds of decode and select together; and how
often each reading ranked (request found, prose fallback, positional cut).
``--misses`` lists what was lost and the pattern ranked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loadtests.long_messages import (
    _DOC_SENTENCES,
    SENTENCE_CATEGORIES,
    csv_dump,
    documentation,
    java_log,
    json_dump,
    python_log,
)
from tool_selector.offline.evaluation.dataset import (
    BenchQuery,
    default_bench_dir,
    load_dataset,
    pick_queries,
)

PLACEMENTS = ("start", "middle", "end")
SIZES_KB = (3, 8, 20, 100)
_PATHS = ["/api/v1/items", "/login", "/static/app.js", "/api/v1/orders", "/health"]
_AGENTS = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.4.0", "Go-http-client/1.1"]
_HOSTS = ["web-1", "web-2", "db-1"]
_SVCS = ["orders", "billing", "auth", "search"]
_NAMES = ["Ada", "Grace", "Linus", "Margaret"]

# --- pastes, generated -----------------------------------------------------------------


def nginx_log(rng: random.Random, lines: int) -> str:
    """nginx / apache combined access log, each line starting with the client's IP."""
    return "\n".join(
        f"{rng.randrange(1, 223)}.{rng.randrange(256)}.{rng.randrange(256)}."
        f"{rng.randrange(1, 255)} - - [27/Nov/2026:10:{i % 60:02d}:{rng.randrange(60):02d} "
        f'+0000] "{rng.choice(["GET", "POST"])} {rng.choice(_PATHS)}?page={rng.randrange(9)} '
        f'HTTP/1.1" {rng.choice([200, 200, 301, 404, 500])} {rng.randrange(200, 90000)} '
        f'"https://shop.example.com/" "{rng.choice(_AGENTS)}"'
        for i in range(lines)
    )


def syslog(rng: random.Random, lines: int) -> str:
    """BSD syslog lines (``Nov 27 10:00:01 host prog[pid]: message``)."""
    messages = [
        "Started Session {n} of user root.",
        "Accepted publickey for deploy from 10.0.0.{n} port 52{n} ssh2",
        "Out of memory: Killed process {n} (java) total-vm:8123456kB",
        "Connection reset by peer, please retry later",
        "error: could not resolve host registry.example.com",
    ]
    prog = ["systemd[1]", "sshd[812]", "kernel:", "dockerd[655]", "CRON[2231]"]
    return "\n".join(
        f"Nov {rng.randrange(1, 29):2d} 10:{i % 60:02d}:{rng.randrange(60):02d} "
        f"{rng.choice(_HOSTS)} {rng.choice(prog)} "
        + rng.choice(messages).format(n=rng.randrange(10, 99))
        for i in range(lines)
    )


def json_lines(rng: random.Random, lines: int) -> str:
    """Structured logs, one JSON object a line."""
    return "\n".join(
        json.dumps(
            {
                "ts": f"2026-11-27T10:{i % 60:02d}:{rng.randrange(60):02d}Z",
                "level": rng.choice(["info", "info", "warn", "error"]),
                "msg": rng.choice(
                    ["request served", "please retry the payment", "cache miss", "slow query"]
                ),
                "service": rng.choice(_SVCS),
                "latency_ms": rng.randrange(1, 900),
            }
        )
        for i in range(lines)
    )


def logfmt(rng: random.Random, lines: int) -> str:
    """``key=value`` logs (logfmt)."""
    return "\n".join(
        f"time=2026-11-27T10:{i % 60:02d}:{rng.randrange(60):02d}Z "
        f"level={rng.choice(['info', 'warn', 'error'])} service={rng.choice(_SVCS)} "
        f'msg="{rng.choice(["order created", "payment failed, please check", "user signed in"])}"'
        f" duration={rng.randrange(1, 900)}ms user_id={rng.randrange(10**6)}"
        for i in range(lines)
    )


def yaml_doc(rng: random.Random, items: int) -> str:
    """A Kubernetes-like YAML manifest."""
    out: list[str] = []
    for _ in range(max(1, items // 12)):
        svc = rng.choice(_SVCS)
        out += [
            "apiVersion: apps/v1",
            "kind: Deployment",
            "metadata:",
            f"  name: {svc}",
            "  labels:",
            f"    app: {svc}",
            "spec:",
            f"  replicas: {rng.randrange(1, 9)}",
            "  template:",
            "    spec:",
            "      containers:",
            f"        - name: {svc}",
            f"          image: registry.example.com/{svc}:1.{rng.randrange(30)}.{rng.randrange(9)}",
            "          env:",
            "            - name: LOG_LEVEL",
            "              value: info",
            "---",
        ]
    return "\n".join(out)


def python_traceback(rng: random.Random, frames: int) -> str:
    """Python tracebacks, chained."""
    out: list[str] = []
    for _ in range(max(1, frames // 8)):
        out.append("Traceback (most recent call last):")
        for _ in range(4):
            out += [
                f'  File "/usr/lib/python3.11/site-packages/{rng.choice(_SVCS)}/core.py", '
                f"line {rng.randrange(10, 900)}, in {rng.choice(['run', 'handle', 'send'])}",
                "    return self._send(request, timeout=timeout, **kwargs)",
            ]
        out += [
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com',"
            " port=443): Max retries exceeded with url: /v1/charges",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
        ]
    return "\n".join(out)


def unified_diff(rng: random.Random, hunks: int) -> str:
    """A ``git diff``."""
    out: list[str] = []
    for h in range(max(1, hunks // 10)):
        name = f"src/{rng.choice(_SVCS)}/handler.py"
        out += [
            f"diff --git a/{name} b/{name}",
            f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644",
            f"--- a/{name}",
            f"+++ b/{name}",
            f"@@ -{h * 10 + 1},7 +{h * 10 + 1},8 @@ def handle(request):",
            "     payload = request.json()",
            "-    if not payload:",
            "-        return error(400, 'empty body')",
            "+    if not payload or 'id' not in payload:",
            "+        # please keep this message short, the client shows it",
            "+        return error(400, 'missing id')",
            "     return process(payload)",
        ]
    return "\n".join(out)


def markdown_table(rng: random.Random, rows: int) -> str:
    """A Markdown table."""
    out = ["| region | plan | seats | MRR | note |", "|---|---|---:|---:|---|"]
    out += [
        f"| {rng.choice(['EMEA', 'APAC', 'NA'])} | {rng.choice(['Pro', 'Team'])} | "
        f"{rng.randrange(1, 500)} | ${rng.randrange(1, 90)},{rng.randrange(1000):03d} | "
        f"{rng.choice(['renewal due', 'please call back', ''])} |"
        for _ in range(rows)
    ]
    return "\n".join(out)


def html_page(rng: random.Random, items: int) -> str:
    """A page's HTML source."""
    out = ["<!DOCTYPE html>", "<html lang='en'>", "<head><title>Orders</title></head>", "<body>"]
    for _ in range(max(1, items // 4)):
        out += [
            f'  <div class="card" id="order-{rng.randrange(10**6)}">',
            f"    <h2>Order for {rng.choice(_NAMES)}</h2>",
            f"    <p>Total: ${rng.randrange(10, 999)}.00. Please allow 3-5 days.</p>",
            "  </div>",
        ]
    return "\n".join([*out, "</body>", "</html>"])


def email_thread(rng: random.Random, messages: int) -> str:
    """A quoted e-mail thread, each older message one quote level deeper."""
    out: list[str] = []
    for depth in range(max(1, messages // 6)):
        who = rng.choice(_NAMES)
        quote = "> " * depth
        out += [
            f"{quote}On Tue, Nov {rng.randrange(1, 27)}, 2026 at 9:{rng.randrange(60):02d} AM "
            f"{who} <{who.lower()}@example.com> wrote:",
            f"{quote}> Can you send me the updated numbers for the {rng.choice(_SVCS)} team?",
            f"{quote}> {rng.choice(_DOC_SENTENCES)}",
            f"{quote}> Thanks, {who}",
            f"{quote}>",
        ]
    return "\n".join(out)


def chat_transcript(rng: random.Random, lines: int) -> str:
    """A chat export (``[10:02] name: message``)."""
    said = [
        "did anyone restart the billing workers?",
        "yes, about ten minutes ago",
        "can you check the dashboard again",
        "looks fine now, latency is back to 40 ms",
        "I'll write the postmortem tomorrow",
        "please don't deploy on Friday",
    ]
    return "\n".join(
        f"[10:{i % 60:02d}] {rng.choice(_NAMES)}: {rng.choice(said)}" for i in range(lines)
    )


#: Each kind with the sentence a person writes before pasting it.
KINDS: dict[str, tuple[Callable[[random.Random, int], str], str]] = {
    "nginx": (nginx_log, "Here are the access logs from the edge:"),
    "syslog": (syslog, "This is what journalctl shows:"),
    "jsonl": (json_lines, "The service logs:"),
    "logfmt": (logfmt, "Logs from the gateway:"),
    "csv": (csv_dump, "Here's the export:"),
    "json": (json_dump, "The API returned this:"),
    "yaml": (yaml_doc, "Our manifest:"),
    "python": (python_log, "The worker crashed with this:"),
    "traceback": (python_traceback, "Traceback from the client:"),
    "java": (java_log, "This is what the server printed:"),
    "diff": (unified_diff, "The change I made:"),
    "table": (markdown_table, "Numbers from the report:"),
    "html": (html_page, "The page source:"),
    "email": (email_thread, "See the thread below:"),
    "chat": (chat_transcript, "From the team chat:"),
    "docs": (documentation, "For reference, the docs say:"),
}


def paste(rng: random.Random, kinds: Sequence[str], chars: int) -> str:
    """About ``chars`` characters of the ``kinds`` in turn, each after its lead sentence."""
    out: list[str] = []
    i = 0
    while sum(len(x) + 1 for x in out) < chars:
        make, intro = KINDS[kinds[i % len(kinds)]]
        out.append(f"{intro}\n\n{make(rng, 200)}\n")
        i += 1
    text = "\n".join(out)[:chars]
    return text.rsplit("\n", 1)[0] if "\n" in text else text


#: What real requests carry, added to a share of them (the bare request carries it too).
DECORATIONS: list[tuple[str, str]] = [
    ("", ""),
    ("", ""),
    ("Unrelated to that log, my actual question: ", ""),
    ("Anyway, ", ""),
    ("btw ", ""),
    ("TL;DR: ", ""),
    ("", " (docs: https://docs.example.com/api/v2?ref=chat)"),
    ("", " The value is `RATE_LIMIT=500` in our config."),
    ("So: ", ""),
]
#: Requests of real traffic a finder can lose, with their gold tools (added to every
#: data set's catalog as written here).
ISSUE_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    (
        "Calculate the return on equity for a company with a net income of $2,000,000, "
        "shareholder's equity of $10,000,000 and dividends of $200,000.",
        {
            "name": "calculate_return_on_equity",
            "description": "Calculate a company's return on equity from its net income, "
            "shareholder's equity and dividends paid.",
        },
    ),
    (
        "Unrelated to that log, my actual question: Translate 'good morning, how are you?' "
        "into French.",
        {
            "name": "translate_text",
            "description": "Translate text from one language into another.",
        },
    ),
]


def decorate(text: str, rng: random.Random) -> str:
    before, after = rng.choice(DECORATIONS)
    if before and not before.endswith(": "):
        text = text[0].lower() + text[1:]
    return f"{before}{text}{after}"


def message(request: str, placement: str, kb: int, seed: str) -> tuple[str, str]:
    """``request`` in about ``kb`` KB of one or two kinds of paste, and the kinds' names."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    names = sorted(KINDS)
    kinds = rng.sample(names, rng.choice([1, 1, 2]))
    size = kb * 1000 - len(request)
    label = "+".join(kinds)
    if placement == "start":
        return f"{request}\n\n{paste(rng, kinds, size)}", label
    if placement == "end":
        return f"{paste(rng, kinds, size)}\n\n{request}", label
    half = paste(rng, kinds, size // 2)
    return f"{half}\n\n{request}\n\n{paste(rng, kinds[::-1], size // 2)}", label


# --- the run -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    dataset: str
    placement: str
    kb: int
    query: BenchQuery
    text: str
    kinds: str


@dataclass
class Result:
    case: Case
    names: list[str]
    seconds: float
    reading: str
    pattern: str
    decode_seconds: float


def requests_of(name: str, split: str, limit: int, seed: int) -> list[BenchQuery]:
    """Up to ``limit`` sentence queries with gold of ``name`` (``split`` half), decorated."""
    data = load_dataset(default_bench_dir(), name)
    queries = [q for q in data.queries if q.gold and q.category not in SENTENCE_CATEGORIES]
    picked = pick_queries(queries, split, limit)  # type: ignore[arg-type]
    out = []
    for q in picked:
        rng = random.Random(f"{seed}:{q.id}")
        out.append(BenchQuery(q.id, decorate(q.text, rng), q.gold, q.catalog, q.category))
    out += [
        BenchQuery(f"issue28-{i}", text, (tool["name"],))
        for i, (text, tool) in enumerate(ISSUE_REQUESTS)
    ]
    return out


def catalog(name: str, size: int, queries: Sequence[BenchQuery]) -> list[dict[str, Any]]:
    """``size`` tools of ``name`` holding every gold (and the issue's tools), by hash."""
    data = load_dataset(default_bench_dir(), name)
    gold = {g for q in queries for g in q.gold}
    by_hash = sorted(data.tools, key=lambda t: hashlib.sha256(t.name.encode()).digest())
    keep = [t for t in data.tools if t.name in gold]
    keep += [t for t in by_hash if t.name not in gold][: max(0, size - len(keep) - 2)]
    wire = [
        {"name": t.name, "description": t.description or "", "parameters": t.definition or {}}
        for t in keep
    ]
    return wire + [{**tool, "parameters": {}} for _, tool in ISSUE_REQUESTS]


class InProcess:
    """The service's decoder and a selector built as the service builds it, warm, no
    query cache (``TOOL_SELECTOR_QUERY_CACHE_SIZE=0``), answering compress bodies."""

    def __init__(self, env: dict[str, str]) -> None:
        from prometheus_client import CollectorRegistry  # noqa: PLC0415

        from tool_selector.embeddings.factory import (  # noqa: PLC0415
            encoder_from_settings,
            multilingual_from_settings,
            static_from_settings,
        )
        from tool_selector.http.wiring import build_selector  # noqa: PLC0415
        from tool_selector.metrics import Metrics  # noqa: PLC0415
        from tool_selector.pipeline.decoding import Decoder  # noqa: PLC0415
        from tool_selector.settings import Settings  # noqa: PLC0415

        settings = Settings.from_env({**os.environ, **env})
        self.decoder = Decoder(settings)
        self.selector = build_selector(settings, Metrics(CollectorRegistry()))
        self.selector.static = static_from_settings(settings)
        self.selector.encoder = encoder_from_settings(settings)
        self.selector.multilingual = multilingual_from_settings(settings)

    def ask(
        self, text: str, tools: list[dict[str, Any]]
    ) -> tuple[list[str], float, str, str, float]:
        """Names returned, seconds (decode and select), the reading ranked, the pattern, and
        the seconds of the decode alone (where the request is found)."""
        from tool_selector_client.wire import COMPRESS_PATH  # noqa: PLC0415

        body = json.dumps({"query": text, "tools": tools, "max_tools": 25}).encode()
        began = time.perf_counter()
        _, ask = self.decoder.decode(body, COMPRESS_PATH)
        decoded = time.perf_counter()
        outcome = self.selector.select(ask)
        took = time.perf_counter() - began
        reading = getattr(ask, "pattern_kind", None) or ("sent" if not ask.pattern_cut else "?")
        return list(outcome.ranking.names), took, str(reading), ask.pattern, decoded - began

    def warm(self, tools: list[dict[str, Any]], timeout: float = 900) -> None:
        """Ask until the catalog is answered on the hybrid path (embedded)."""
        from tool_selector_client.wire import COMPRESS_PATH  # noqa: PLC0415

        body = json.dumps({"query": "warm up", "tools": tools, "max_tools": 25}).encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.selector.select(self.decoder.decode(body, COMPRESS_PATH)[1]).path == "hybrid":
                return
            time.sleep(0.5)
        raise TimeoutError("the catalog never answered on the hybrid path")


def run(args: argparse.Namespace) -> list[Result]:
    env = {"TOOL_SELECTOR_QUERY_CACHE_SIZE": "0"}
    if args.find_request == "off":
        env["TOOL_SELECTOR_FIND_REQUEST"] = "false"
    service = InProcess(env)
    results: list[Result] = []
    for name in args.datasets:
        queries = requests_of(name, args.split, args.queries, args.seed)
        tools = catalog(name, args.tools, queries)
        service.warm(tools)
        for q in queries:  # the request alone: what a paste can at best leave
            names, took, reading, pattern, found = service.ask(q.text, tools)
            case = Case(name, "alone", 0, q, q.text, "")
            results.append(Result(case, names, took, reading, pattern, found))
        for kb in args.sizes:
            for placement in args.placements:
                for q in queries:
                    seed = f"{args.seed}:{name}:{q.id}:{placement}:{kb}"
                    text, kinds = message(q.text, placement, kb, seed)
                    names, took, reading, pattern, found = service.ask(text, tools)
                    case = Case(name, placement, kb, q, text, kinds)
                    results.append(Result(case, names, took, reading, pattern, found))
    return results


def _hit(result: Result) -> bool:
    return bool(set(result.names[:25]) & set(result.case.query.gold))


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def report(results: Sequence[Result], args: argparse.Namespace) -> str:
    """Kept per size and placement, readings, then latency per size."""
    alone = {(r.case.dataset, r.case.query.id) for r in results if r.case.kb == 0 and _hit(r)}
    rows = [
        "| size | " + " | ".join(f"{p} kept %" for p in args.placements) + " | readings |",
        "|---|" + "---:|" * len(args.placements) + "---|",
    ]
    for kb in args.sizes:
        cells = []
        for p in args.placements:
            base = [
                r
                for r in results
                if r.case.kb == kb
                and r.case.placement == p
                and (r.case.dataset, r.case.query.id) in alone
            ]
            kept = sum(_hit(r) for r in base)
            cells.append(f"{100 * kept / len(base):.1f} ({kept}/{len(base)})" if base else "-")
        readings = Counter(r.reading for r in results if r.case.kb == kb)
        rows.append(
            f"| {kb} KB | "
            + " | ".join(cells)
            + " | "
            + ", ".join(f"{k} {v}" for k, v in sorted(readings.items()))
            + " |"
        )
    everywhere = [r for r in results if r.case.kb and (r.case.dataset, r.case.query.id) in alone]
    total = sum(_hit(r) for r in everywhere)
    rows.append(
        f"| all | kept {100 * total / max(1, len(everywhere)):.1f} ({total}/{len(everywhere)}); "
        f"request alone keeps {len(alone)} of "
        f"{sum(1 for r in results if r.case.kb == 0)} |"
    )
    rows += [
        "",
        "| size | messages | p50 ms | p99 ms | max ms | decode (finding) p50 / p99 ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kb in [0, *args.sizes]:
        took = [r.seconds * 1000 for r in results if r.case.kb == kb]
        found = [r.decode_seconds * 1000 for r in results if r.case.kb == kb]
        if took:
            rows.append(
                f"| {f'{kb} KB' if kb else 'request alone'} | {len(took)} | "
                f"{statistics.median(took):.1f} | {quantile(took, 0.99):.1f} | {max(took):.1f} | "
                f"{statistics.median(found):.1f} / {quantile(found, 0.99):.1f} |"
            )
    return "\n".join(rows)


def by_kind(results: Sequence[Result]) -> str:
    """Kept per paste kind (every size and placement together)."""
    alone = {(r.case.dataset, r.case.query.id) for r in results if r.case.kb == 0 and _hit(r)}
    count: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for r in results:
        if r.case.kb and (r.case.dataset, r.case.query.id) in alone:
            for kind in r.case.kinds.split("+"):
                count[kind] += 1
                kept[kind] += _hit(r)
    return ", ".join(f"{k} {100 * kept[k] / count[k]:.1f}" for k in sorted(count))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["bfcl", "metatool", "agent"])
    parser.add_argument("--tools", type=int, default=150)
    parser.add_argument("--queries", type=int, default=24, help="per data set")
    parser.add_argument("--split", default="test", choices=["dev", "test", "all"])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES_KB))
    parser.add_argument("--placements", nargs="+", default=list(PLACEMENTS))
    parser.add_argument("--find-request", choices=["on", "off"], default="on")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--misses", action="store_true", help="print what was lost")
    args = parser.parse_args(argv)
    print(
        "command: PYTHONPATH=service:. python -m loadtests.long_pastes "
        + " ".join(argv if argv is not None else sys.argv[1:])
    )
    load_before = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    results = run(args)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nfind request {args.find_request}: {', '.join(args.datasets)}; {args.tools} tools; "
        f"{args.split} split; load average before {load_before}, after {load}\n"
    )
    print(report(results, args))
    print("\nkept % by paste kind: " + by_kind(results))
    if args.misses:
        alone = {(r.case.dataset, r.case.query.id) for r in results if r.case.kb == 0 and _hit(r)}
        for r in results:
            if r.case.kb and (r.case.dataset, r.case.query.id) in alone and not _hit(r):
                c = r.case
                print(
                    f"MISS {c.dataset} {c.placement} {c.kb}KB {c.kinds} [{r.reading}] "
                    f"{c.query.text!r} -> {r.pattern[:300]!r}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
