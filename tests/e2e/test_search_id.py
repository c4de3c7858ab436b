"""Every answer has an id (``X-Tool-Selector-Search-Id``), and the search's log line repeats
it with the ranking version (model id, fusion digest), over real HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import SAMPLE_TOOLS, ServiceProcess, start_service, wait_until
from tool_selector.http.search_id import SEARCH_ID_HEADER
from tool_selector.http.wiring import fusion_digest
from tool_selector.pipeline.selector import Selector
from tool_selector_client.catalog_lint import LINT_PATH
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH

KEY = "k" * 32
JSON = {"content-type": "application/json"}
TOKEN = {"Authorization": f"Bearer {KEY}"}
AUTH = {**JSON, **TOKEN}
SEARCH = {"pattern": "slack message", "tools": SAMPLE_TOOLS}
COMPRESS = {"query": "slack message", "tools": SAMPLE_TOOLS}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """A lexical service that wants a token (so a 401 can be asked for)."""
    env = {"TOOL_SELECTOR_ENCODER": "none", "TOOL_SELECTOR_API_KEYS": KEY}
    proc = start_service(tmp_path_factory.mktemp("keyed"), env, wait_ready=False)
    yield proc
    proc.stop()


def call(service: ServiceProcess, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, service.url + path, timeout=30, **kw)


ANSWERS: list[tuple[str, str, dict[str, Any], int]] = [
    ("POST", SEARCH_PATH, {"json": SEARCH, "headers": AUTH}, 200),
    ("POST", COMPRESS_PATH, {"json": COMPRESS, "headers": AUTH}, 200),
    ("POST", LINT_PATH, {"json": {"tools": SAMPLE_TOOLS}, "headers": AUTH}, 200),
    ("POST", SEARCH_PATH, {"content": b"{", "headers": AUTH}, 400),
    ("POST", COMPRESS_PATH, {"json": {"query": " ", "tools": []}, "headers": AUTH}, 400),
    ("POST", SEARCH_PATH, {"json": SEARCH, "headers": JSON}, 401),
    ("POST", SEARCH_PATH, {"content": b"{}", "headers": TOKEN}, 415),
    ("GET", "/nope", {}, 404),
    ("GET", SEARCH_PATH, {"headers": AUTH}, 405),
    ("GET", "/healthz", {}, 200),
    ("GET", "/health", {}, 200),
    ("GET", "/metrics", {}, 200),
]


@pytest.mark.parametrize(
    ("method", "path", "kw", "status"),
    ANSWERS,
    ids=[
        "search",
        "compress",
        "lint",
        "malformed",
        "blank-query",
        "unauthorized",
        "media-type",
        "not-found",
        "method",
        "healthz",
        "health",
        "metrics",
    ],
)
def test_every_answer_carries_an_id(
    keyed: ServiceProcess, method: str, path: str, kw: dict[str, Any], status: int
) -> None:
    r = call(keyed, method, path, **kw)
    assert r.status_code == status, r.text
    assert re.fullmatch("[0-9a-f]{32}", r.headers[SEARCH_ID_HEADER])


def test_each_answer_has_its_own_id(keyed: ServiceProcess) -> None:
    ids = {call(keyed, "GET", "/healthz").headers[SEARCH_ID_HEADER] for _ in range(5)}
    assert len(ids) == 5


def logged(service: ServiceProcess, sid: str) -> dict[str, Any]:
    """The search log line with ``search_id`` ``sid`` (waits for it to be written)."""

    def find() -> dict[str, Any] | None:
        for line in service.log_path.read_text().splitlines():
            if sid in line and line.startswith("{"):
                record: dict[str, Any] = json.loads(line)
                if record.get("search_id") == sid:
                    return record
        return None

    return wait_until(find, 10, f"the log line of search {sid}")


@pytest.mark.parametrize(
    ("path", "body"), [(SEARCH_PATH, SEARCH), (COMPRESS_PATH, COMPRESS)], ids=["search", "compress"]
)
def test_the_log_line_repeats_the_id_with_the_ranking_version(
    keyed: ServiceProcess, path: str, body: dict[str, Any]
) -> None:
    r = call(keyed, "POST", path, json=body, headers=AUTH)
    record = logged(keyed, r.headers[SEARCH_ID_HEADER])
    assert record["event"] == "search"
    assert record["ranking"] == {
        "model": None,
        "weights": None,
        "fusion": fusion_digest(Selector()),
    }


def test_a_hybrid_answer_logs_its_model(service: ServiceProcess) -> None:
    r = call(service, "POST", SEARCH_PATH, json=SEARCH)
    record = logged(service, r.headers[SEARCH_ID_HEADER])
    model = {"hybrid": "all-MiniLM-L6-v2", "static": "all-MiniLM-L6-v2-static"}
    path = r.headers["x-tool-selector-ranking"]
    assert model[path] in record["ranking"]["model"]
    assert re.fullmatch("[0-9a-f]{16}(\\+[0-9a-f]{16})*", record["ranking"]["weights"])
    if path == "static":  # the table's id carries the same digest
        assert record["ranking"]["model"].endswith(record["ranking"]["weights"])


def test_the_weights_digest_is_the_model_files_sha256() -> None:
    """The hybrid path's digest is the sha256 of the ONNX files that ranked, joined; another
    file is another digest."""
    import hashlib  # noqa: PLC0415

    from tool_selector.embeddings.encoder import MeanEncoder, weights_digest  # noqa: PLC0415
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    encoder = encoder_from_settings(Settings())
    assert isinstance(encoder, MeanEncoder)
    files = [p._model_file for p in encoder.parts if isinstance(p, OnnxEncoder)]
    assert len(files) == 2
    expected = [hashlib.sha256(f.read_bytes()).hexdigest()[:16] for f in files]
    assert weights_digest(encoder) == "+".join(expected)
    assert weights_digest(encoder.parts[0]) == expected[0]
