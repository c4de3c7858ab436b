"""Schemathesis against the committed openapi.yaml, and hypothesis properties on the endpoint.

Bounded for CI (FUZZ_EXAMPLES, default 60 per mode); the nightly command in docs/security.md
raises it. Every generated request must get a documented status, never a 5xx, and every
response must match the schema (status, content type, headers, body).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from tests.support import ROOT, ServiceProcess, start_service

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
KEY = "fuzz-key-0123456789"
_CONFIG = SchemathesisConfig.from_path(ROOT / "schemathesis.toml")
SCHEMA = schemathesis.openapi.from_path(ROOT / "openapi.yaml", config=_CONFIG)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    unsupported_method,
]
_FAST = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """Lexical service with a service token (auth on, like production)."""
    env = {"TOOL_SELECTOR_ENCODER": "none", "TOOL_SELECTOR_API_KEYS": KEY}
    proc = start_service(tmp_path_factory.mktemp("fuzz"), env, wait_ready=False)
    yield proc
    proc.stop()


@SCHEMA.parametrize()
@_FAST
def test_api_conforms_to_openapi_yaml_with_a_token(
    case: schemathesis.Case, keyed: ServiceProcess
) -> None:
    case.call_and_validate(
        base_url=keyed.url, headers={"Authorization": f"Bearer {KEY}"}, checks=CHECKS
    )


@SCHEMA.parametrize()
@_FAST
def test_api_conforms_to_openapi_yaml_with_the_model(
    case: schemathesis.Case, service: ServiceProcess
) -> None:
    case.call_and_validate(base_url=service.url, checks=CHECKS)


_token = st.one_of(
    st.just(KEY),
    st.just(KEY[:-1]),
    st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=40),
)


@given(
    scheme=st.sampled_from(["Bearer", "bearer", "Basic", "Token", ""]),
    token=_token,
    as_api_key=st.booleans(),
)
@_FAST
def test_any_credential_but_the_key_is_refused(
    keyed: ServiceProcess, scheme: str, token: str, as_api_key: bool
) -> None:
    header = ("X-API-Key", token) if as_api_key else ("Authorization", f"{scheme} {token}".strip())
    headers = dict([header])
    r = httpx.post(
        keyed.url + "/v1/tool-discovery/search",
        json={"pattern": "x", "tools": [{"name": "x"}]},
        headers=headers,
    )
    accepted = token == KEY and (as_api_key or scheme.lower() == "bearer")
    assert r.status_code == (200 if accepted else 401)


_name = st.text(
    st.characters(max_codepoint=0x2FFF, exclude_categories=("C", "Z")), min_size=1, max_size=30
)


@given(
    names=st.lists(_name, min_size=1, max_size=30),
    pattern=_name,
    top_k=st.integers(1, 10),
    keep=st.lists(_name, max_size=3),
)
@_FAST
def test_search_answers_a_valid_subset(
    keyed: ServiceProcess, names: list[str], pattern: str, top_k: int, keep: list[str]
) -> None:
    body = {
        "pattern": pattern,
        "top_k": top_k,
        "always_keep": keep,
        "tools": [{"name": n} for n in names],
    }
    r = httpx.post(keyed.url + "/v1/tool-discovery/search", json=body, headers={"X-API-Key": KEY})
    assert r.status_code == 200, r.text
    selected = r.json()["selected_names"]
    assert set(selected) <= set(names)
    assert len(selected) == len(set(selected)) <= top_k
    present_keep = [k for k in dict.fromkeys(keep) if k in names]
    assert set(present_keep[:top_k]) <= set(selected) or len(present_keep) > top_k


@given(body=st.binary(max_size=300))
@_FAST
def test_arbitrary_bytes_get_a_4xx_json_error(keyed: ServiceProcess, body: bytes) -> None:
    r = httpx.post(
        keyed.url + "/v1/tool-discovery/search",
        content=body,
        headers={"X-API-Key": KEY, "Content-Type": "application/json"},
    )
    assert 400 <= r.status_code < 500
    assert set(r.json()) == {"code", "detail"}


def test_schema_file_is_the_committed_one() -> None:
    assert Path(SCHEMA.location or "").name == "openapi.yaml"


def test_no_request_so_far_was_a_server_error(keyed: ServiceProcess) -> None:
    text = httpx.get(keyed.url + "/metrics").text
    assert "tool_selector_errors_total" in text
    assert 'code="internal_error"' not in text
