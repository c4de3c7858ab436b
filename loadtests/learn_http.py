"""The learned arm judged over HTTP: ``python -m loadtests.learn_http``.

A real service on loopback with its default settings (learning on, kept in a temporary
folder), each set's catalog sent until every encoder has embedded it; then, per set and
traffic, the protocol of ``tool-selector eval --learn`` (``offline.evaluation.learn.replay``:
the same halves, simulated model, flood and seeds) spoken over HTTP:

- the traffic's searches in a scope of the run's own (``X-Tool-Selector-Scope``), each
  answer's ``X-Tool-Selector-Search-Id`` reported back with the simulated model's calls
  (``POST /v1/tool-discovery/feedback``);
- the flood from a second caller: another loopback address (without tokens the service's
  caller is the client's address), so its share of the scope is capped as a real one's;
- after ``TOOL_SELECTOR_LEARN_REFRESH_MS`` (the service rereads a scope's evidence at most
  that often), the measured queries in that scope (after) and in a scope no feedback
  reached (before), each pattern first asked once unmeasured: a pattern the service sees for
  the first time may be answered before all its vectors are in (the embedding deadline), and
  the second ask would have them.

The replay runs on the service's own clock and refresh, not the in-process replay's (a
second a search, evidence reread every 20), so the two tables differ a little. ``--limit``
samples each set's queries (all splits, by id hash) as ``tool-selector eval --learn --limit``
does, to compare the two on the same queries. Prints the markdown table and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import msgspec
from tests.support import start_service, warm_catalog

from tool_selector.offline.evaluation.dataset import (
    DATASETS,
    Dataset,
    Split,
    default_bench_dir,
    load_dataset,
)
from tool_selector.offline.evaluation.learn import (
    FLOOD,
    SetResult,
    Traffic,
    replay,
    sampled,
    table,
)
from tool_selector_client.wire import FEEDBACK_PATH, SCOPE_HEADER, SEARCH_ID_HEADER, SEARCH_PATH

#: Where the flood's requests come from: another loopback address is another caller.
FLOOD_ADDRESS = "127.0.0.2"
#: Longer than the service's default ``TOOL_SELECTOR_LEARN_REFRESH_MS`` (1 s).
REFRESH_WAIT = 1.5


@dataclass(slots=True)
class HttpScope:
    """One run's scope on the service (``offline.evaluation.learn.Service`` over HTTP)."""

    url: str
    traffic: httpx.Client
    flood: httpx.Client
    tools: list[object]
    scope: str
    k: int = 5
    waited: bool = False

    def _post(self, client: httpx.Client, text: str, scope: str, top_k: int) -> httpx.Response:
        body = msgspec.json.encode({"pattern": text, "tools": self.tools, "top_k": top_k})
        r = client.post(
            self.url + SEARCH_PATH,
            content=body,
            headers={"content-type": "application/json", SCOPE_HEADER: scope},
        )
        r.raise_for_status()
        return r

    def search(self, text: str, caller: str, calls: Callable[[Sequence[str]], list[str]]) -> None:
        client = self.flood if caller == FLOOD else self.traffic
        r = self._post(client, text, self.scope, 5)
        called = calls(r.json()["selected_names"])
        body = {"search_id": r.headers[SEARCH_ID_HEADER], "called": called}
        client.post(self.url + FEEDBACK_PATH, json=body).raise_for_status()

    def answer(self, text: str, scoped: bool) -> Sequence[str]:
        if not self.waited:  # the traffic is over: let the service reread the scope
            time.sleep(REFRESH_WAIT)
            self.waited = True
        scope = self.scope if scoped else f"{self.scope}-none"
        if not scoped:  # asked first: once unmeasured, so both asks find the pattern warm
            self._post(self.traffic, text, scope, self.k)
        names: list[str] = self._post(self.traffic, text, scope, self.k).json()["selected_names"]
        return names


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m loadtests.learn_http", description=__doc__.split("\n")[0]
    )
    p.add_argument("--split", choices=("dev", "test"), default="test")
    p.add_argument("--limit", type=int, help="most queries per set (all splits, by id hash)")
    p.add_argument("--dataset", action="append", choices=DATASETS, help="a set (default: all)")
    p.add_argument("--wrong", type=float, nargs="+", default=[0.1, 0.3], help="wrong shares")
    p.add_argument("--flood", type=int, default=1000, help="flood searches at the first share")
    p.add_argument("--output", type=Path, default=Path("reports/learn-http.json"))
    args = p.parse_args(argv)
    bench = default_bench_dir()
    sets = sampled([load_dataset(bench, name) for name in args.dataset or DATASETS], args.limit)
    traffics = [Traffic(w) for w in args.wrong]
    if args.flood:
        traffics.append(Traffic(traffics[0].wrong, args.flood))
    results = run(sets, traffics, args.split)
    command = "python -m loadtests.learn_http " + " ".join(sys.argv[1:] if argv is None else argv)
    sys.stdout.write(f"`{command}`\n\n{table(results)}\n")
    report = {"command": command, "results": [r.as_dict() for r in results]}
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def run(sets: Sequence[Dataset], traffics: Sequence[Traffic], split: Split) -> list[SetResult]:
    """Every set under every traffic on one real service; a flood's requests come from the
    other sets."""
    with tempfile.TemporaryDirectory() as tmp:
        service = start_service(Path(tmp), deadline=None)
        try:
            traffic = httpx.Client(timeout=120)
            other = httpx.HTTPTransport(local_address=FLOOD_ADDRESS)
            flood = httpx.Client(timeout=120, transport=other)
            results = []
            for data in sets:
                tools = msgspec.to_builtins(list(data.tools))
                warm_catalog(service.url, tools, timeout=1800)
                others = [q for d in sets if d.name != data.name for q in d.queries][:2_000]
                for t in traffics:
                    started = time.perf_counter()
                    scope = f"{data.name}-{split}-{round(100 * t.wrong)}-{t.flood}"
                    on = HttpScope(service.url, traffic, flood, tools, scope)
                    results.append(replay(on, data, split, t, others))
                    took = time.perf_counter() - started
                    sys.stderr.write(f"{data.name} {t.name}: {took:.0f} s\n")
            return results
        finally:
            service.stop()


if __name__ == "__main__":
    raise SystemExit(main())
