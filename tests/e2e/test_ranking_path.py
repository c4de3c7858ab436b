"""Which path answered: a cold big catalog is answered from the static arm at once, then
hybrid once its embeddings are done in the background (lexically with the static arm off);
the header and the metric label say so."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

import httpx

from tests.support import ServiceProcess, start_service

SEARCH = "/v1/tool-discovery/search"
WORDS = "send read write list delete search create update fetch sync archive merge".split()


def cold_catalog(size: int) -> list[dict[str, str]]:
    marker = uuid.uuid4().hex[:8]
    return [
        {
            "name": f"{WORDS[i % len(WORDS)]}_item_{i}",
            "description": f"{WORDS[(i * 7) % len(WORDS)]} records of kind {i} ({marker})",
        }
        for i in range(size)
    ]


def path_count(url: str, path: str) -> float:
    text = httpx.get(url + "/metrics").text
    found = re.search(
        rf'^tool_selector_ranking_path_total{{path="{path}"}} (\S+)$', text, re.MULTILINE
    )
    return float(found.group(1)) if found else 0.0


def test_cold_catalog_is_static_now_and_hybrid_once_embedded(service: ServiceProcess) -> None:
    body = {"pattern": "archive records", "tools": cold_catalog(300)}
    before = path_count(service.url, "static")
    first = httpx.post(service.url + SEARCH, json=body, timeout=10)
    paths = [first.headers["x-tool-selector-ranking"]]
    deadline = time.monotonic() + 180
    while paths[-1] != "hybrid" and time.monotonic() < deadline:
        time.sleep(0.5)
        r = httpx.post(service.url + SEARCH, json=body, timeout=10)
        paths.append(r.headers["x-tool-selector-ranking"])
    assert (first.status_code, paths[0], paths[-1]) == (200, "static", "hybrid")
    assert path_count(service.url, "static") > before


def sigterm(proc: ServiceProcess) -> int:
    """SIGTERM the service; its exit code (a process still running after 30 s fails)."""
    proc.proc.terminate()
    return proc.proc.wait(30)


def test_sigterm_stops_background_embedding_and_exits_cleanly(tmp_path: Path) -> None:
    """The real model embedding a cold catalog in the background when SIGTERM arrives: the
    queued work is dropped, the running job stops after its chunk, the process exits 0."""
    proc = start_service(
        tmp_path,
        {"TOOL_SELECTOR_EMBED_QUEUE_SIZE": "4", "TOOL_SELECTOR_STATIC_EMBEDDINGS": "false"},
    )
    try:
        for size in (600, 601, 602):  # one running, two queued
            body = {"pattern": "archive records", "tools": cold_catalog(size)}
            r = httpx.post(proc.url + SEARCH, json=body, timeout=10)
            assert r.headers["x-tool-selector-ranking"] == "lexical"
        code = sigterm(proc)
    finally:
        proc.stop()
    log = proc.log_path.read_text()
    assert code == 0
    # one job per model and catalog: with the second encoder on, up to four queued
    assert re.search(r"embedding jobs closed: [1-4] queued catalogs dropped, worker stopped", log)


def test_sigterm_during_warm_up_stops_it_and_exits_cleanly(tmp_path: Path) -> None:
    warmup = tmp_path / "warmup.jsonl"
    warmup.write_text(json.dumps({"tools": cold_catalog(600)}) + "\n")
    proc = start_service(tmp_path, {"TOOL_SELECTOR_WARMUP_FILE": str(warmup)}, wait_ready=False)
    try:
        assert httpx.get(proc.url + "/readyz").status_code == 503  # still warming up
        code = sigterm(proc)
    finally:
        proc.stop()
    assert code == 0
    assert "warm-up stopped: shutting down" in proc.log_path.read_text()
