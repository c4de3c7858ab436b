"""Every answer has an id (``X-Tool-Selector-Search-Id``), and the search's log line repeats
it with the ranking version (model id, fusion digest), over real HTTP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry

from tests.support import SAMPLE_TOOLS, ServiceProcess, start_service, wait_until, warm_catalog
from tool_selector.embeddings.models import BGE_SMALL, MINILM
from tool_selector.http.wiring import build_selector, fusion_digest
from tool_selector.metrics import Metrics
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import LINT_PATH
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_ID_HEADER, SEARCH_PATH

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
        return next((r for r in service.searches() if r.get("search_id") == sid), None)

    return wait_until(find, 10, f"the log line of search {sid}")


@pytest.mark.parametrize(
    ("method", "path", "kw", "status"),
    ANSWERS[3:7],
    ids=["malformed", "blank-query", "unauthorized", "media-type"],
)
def test_a_refused_search_logs_its_id_status_and_code(
    keyed: ServiceProcess, method: str, path: str, kw: dict[str, Any], status: int
) -> None:
    r = call(keyed, method, path, **kw)
    sid = r.headers[SEARCH_ID_HEADER]

    def find() -> dict[str, Any] | None:
        return next((e for e in keyed.events("error") if e.get("search_id") == sid), None)

    record = wait_until(find, 10, f"the log line of refused search {sid}")
    assert (record["status"], record["code"]) == (status, r.json()["code"])


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
        "arm": "lexical",
        "model": None,
        "weights": None,
        "embedded": "none",
        "fusion": fusion_digest(
            build_selector(Settings(encoder="none"), Metrics(CollectorRegistry()))
        ),
    }


def test_a_hybrid_answer_logs_its_model(service: ServiceProcess) -> None:
    r = call(service, "POST", SEARCH_PATH, json=SEARCH)
    ranking = logged(service, r.headers[SEARCH_ID_HEADER])["ranking"]
    model = {"hybrid": "all-MiniLM-L6-v2", "static": "all-MiniLM-L6-v2-static"}
    path = r.headers["x-tool-selector-ranking"]
    if ranking["arm"] == "shortlist":  # the static path, its leaders read by the models
        path = "hybrid"
    assert model[path] in ranking["model"]
    assert ranking["embedded"] == r.headers["x-tool-selector-embedded"]
    assert re.fullmatch("[0-9a-f]{16}(\\+[0-9a-f]{16})*", ranking["weights"])
    assert ranking["model"].count("+") == ranking["weights"].count("+")
    if path == "static":  # the table's id carries the same digest
        assert ranking["model"].split("+")[0].endswith(ranking["weights"].split("+")[0])


#: A catalog of its own (no other test warms it), and a need asked in Chinese and in English.
ARM_TOOLS = [
    {"name": "get_forecast", "description": "Weather forecast for a city, days ahead"},
    {"name": "book_table", "description": "Book a table at a restaurant"},
    {"name": "convert_currency", "description": "Convert an amount between currencies"},
]


def ask(service: ServiceProcess, pattern: str) -> httpx.Response:
    return call(service, "POST", SEARCH_PATH, json={"pattern": pattern, "tools": ARM_TOOLS})


def test_the_log_names_the_arm_and_encoders_that_ranked(service: ServiceProcess) -> None:
    """Once the catalog is fully embedded: an English need is ranked by MiniLM and bge-small
    (``complete``); a Chinese one by the multilingual arm, whose model the log names."""
    warm_catalog(service.url, ARM_TOOLS)
    english = ask(service, "weather in Porto tomorrow")
    assert english.headers["x-tool-selector-embedded"] == "complete"
    ranked = logged(service, english.headers[SEARCH_ID_HEADER])["ranking"]
    both = f"{MINILM.model_id}+{BGE_SMALL.model_id}"
    assert (ranked["arm"], ranked["model"]) == ("dense", both)

    def embedded() -> httpx.Response | None:
        r = ask(service, "明天波尔图的天气怎么样")
        return r if r.headers["x-tool-selector-embedded"] == "complete" else None

    chinese = wait_until(embedded, 60, "the multilingual arm's vectors of the catalog")
    ranked = logged(service, chinese.headers[SEARCH_ID_HEADER])["ranking"]
    assert ranked["arm"] == "multilingual"
    assert "bge-small" not in ranked["model"]
    assert ranked["model"].split("+")[0] != MINILM.model_id


def test_the_weights_digest_is_the_model_files_sha256() -> None:
    """The hybrid path's digest is the sha256 of the ONNX files that ranked, joined; another
    file is another digest."""
    import hashlib  # noqa: PLC0415

    from tool_selector.embeddings.encoder import Ensemble, weights_digest  # noqa: PLC0415
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    encoder = encoder_from_settings(Settings())
    assert isinstance(encoder, Ensemble)
    files = [p._model_file for p in encoder.parts if isinstance(p, OnnxEncoder)]
    assert len(files) == 2
    expected = [hashlib.sha256(f.read_bytes()).hexdigest()[:16] for f in files]
    assert weights_digest(encoder) == "+".join(expected)
    assert weights_digest(encoder.parts[0]) == expected[0]
