"""The HTTP surface beside the search answer, over real HTTP: the catalog report's bodies as
the client's wire type writes them, the text answers' content types, and the compress path's
first-contract body (Context Gateway v0.5.2) and every GET as ``openapi.yaml`` documents
them."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import msgspec
import pytest
import schemathesis
import yaml

from tests.support import ROOT, SAMPLE_TOOLS, ServiceProcess
from tool_selector_client.catalog_lint import LINT_PATH, LintRequest
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH, Tool

JSON = {"content-type": "application/json"}
DOC: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text())
SCHEMA = schemathesis.openapi.from_path(ROOT / "openapi.yaml")
COMPRESS = SCHEMA[COMPRESS_PATH]["POST"]


def request_errors(path: str, body: Any) -> list[str]:
    """What ``openapi.yaml`` says is wrong with ``body`` as ``path``'s request."""
    content = DOC["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    schema = {**content["schema"], "components": DOC["components"]}
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(body)]


def lint(service: ServiceProcess, body: bytes) -> httpx.Response:
    return httpx.post(service.url + LINT_PATH, content=body, headers=JSON, timeout=30)


def test_a_report_by_key_as_the_client_writes_it(lexical_service: ServiceProcess) -> None:
    httpx.post(lexical_service.url + SEARCH_PATH, json={"pattern": "x", "tools": SAMPLE_TOOLS})
    key = lexical_service.searches()[-1]["catalog"]
    body = msgspec.json.encode(LintRequest(catalog=key))  # {"catalog": key, "tools": null}
    answer = lint(lexical_service, body)
    assert (answer.status_code, answer.json()["catalog"]) == (200, key)
    assert request_errors(LINT_PATH, msgspec.json.decode(body)) == []


@pytest.mark.parametrize(
    "body",
    [{}, {"tools": None}, {"catalog": None, "tools": None}, {"catalog": "k", "tools": []}],
    ids=["nothing", "tools-null", "both-null", "both"],
)
def test_a_report_names_exactly_one_catalog(
    lexical_service: ServiceProcess, body: dict[str, Any]
) -> None:
    answer = lint(lexical_service, msgspec.json.encode(body))
    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_request")
    assert request_errors(LINT_PATH, body) != []


def test_a_report_by_tools_as_the_client_writes_it(lexical_service: ServiceProcess) -> None:
    tools = [msgspec.convert(t, Tool) for t in SAMPLE_TOOLS]
    answer = lint(lexical_service, msgspec.json.encode(LintRequest(tools=tools)))
    assert (answer.status_code, answer.json()["tools"]) == (200, len(SAMPLE_TOOLS))


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("POST", f"{LINT_PATH}?format=text", {"tools": SAMPLE_TOOLS}), ("GET", "/metrics", None)],
    ids=["report-text", "metrics"],
)
def test_a_text_answer_names_its_charset_once(
    lexical_service: ServiceProcess, method: str, path: str, body: Any
) -> None:
    """Go's ``mime.ParseMediaType`` (Prometheus' scraper) refuses a repeated parameter."""
    answer = httpx.request(method, lexical_service.url + path, json=body, timeout=30)
    media = answer.headers["content-type"]
    assert (answer.status_code, media.count("charset=")) == (200, 1), media
    assert media.startswith("text/plain;")


@pytest.mark.parametrize(
    "body",
    [
        {"pattern": "send a slack message", "top_k": 2, "tools": SAMPLE_TOOLS},
        {"query": "send a slack message", "max_tools": 2, "tools": SAMPLE_TOOLS},
    ],
    ids=["first-contract-v0.5.2", "compress"],
)
def test_the_compress_path_is_answered_as_openapi_yaml_says(
    lexical_service: ServiceProcess, body: dict[str, Any]
) -> None:
    assert request_errors(COMPRESS_PATH, body) == []
    answer = httpx.post(lexical_service.url + COMPRESS_PATH, json=body, timeout=30)
    assert answer.status_code == 200
    COMPRESS.validate_response(answer)  # raises on an answer the document does not allow


def test_a_bad_query_beside_a_pattern_is_refused_as_documented(
    lexical_service: ServiceProcess,
) -> None:
    body = {"pattern": "slack", "query": 5, "tools": SAMPLE_TOOLS}
    answer = httpx.post(lexical_service.url + COMPRESS_PATH, json=body, timeout=30)
    assert answer.status_code == 400
    assert request_errors(COMPRESS_PATH, body) != []


@pytest.mark.parametrize("path", ["/metrics", "/healthz", "/health", "/readyz"])
def test_every_get_the_service_answers_is_in_openapi_yaml(
    lexical_service: ServiceProcess, path: str
) -> None:
    answer = httpx.get(lexical_service.url + path, timeout=30)
    SCHEMA[path]["GET"].validate_response(answer)  # a path it does not document: KeyError
