"""SPEC.md's bad-input list over real HTTP: every case is a 4xx JSON error, never a 500.

One table, posted to both contracts' paths: the compress contract's bodies are the same
bodies with its own field names (``query``, ``max_tools``).
"""

from collections.abc import Iterator

import httpx
import pytest

from tests.support import ServiceProcess, start_service

LIMITS = {
    "TOOL_SELECTOR_ENCODER": "none",
    "TOOL_SELECTOR_MAX_BODY_BYTES": "20000",
    "TOOL_SELECTOR_MAX_TOOLS": "5",
    "TOOL_SELECTOR_MAX_PATTERN_CHARS": "50",
    "TOOL_SELECTOR_MAX_NAME_CHARS": "20",
    "TOOL_SELECTOR_MAX_DESCRIPTION_CHARS": "100",
    "TOOL_SELECTOR_MAX_DEFINITION_DEPTH": "6",
    "TOOL_SELECTOR_MAX_TOP_K": "10",
}
OK_TOOL = b'{"name":"read_file","description":"Read a file"}'


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    proc = start_service(tmp_path_factory.mktemp("limited"), LIMITS)
    yield proc
    proc.stop()


def body(
    pattern: bytes = b'"read"', tools: bytes = b"[" + OK_TOOL + b"]", extra: bytes = b""
) -> bytes:
    return b'{"pattern":' + pattern + b',"tools":' + tools + extra + b"}"


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


CASES: list[tuple[str, bytes, int, str]] = [
    ("empty_body", b"", 400, "empty_body"),
    ("whitespace_body", b"  \n ", 400, "empty_body"),
    ("truncated_json", b'{"pattern": "x", "tools": [', 400, "malformed_json"),
    ("invalid_utf8", b'{"pattern": "\xff\xfe", "tools": []}', 400, "invalid_utf8"),
    ("bom", b"\xef\xbb\xbf" + body(), 400, "malformed_json"),
    ("nan", body(extra=b',"top_k":NaN'), 400, "malformed_json"),
    ("array", b"[]", 400, "invalid_request"),
    ("null", b"null", 400, "invalid_request"),
    ("string", b'"hello"', 400, "invalid_request"),
    (
        "deep_3000_tools",
        b'{"pattern":"x","tools":' + b"[" * 3000 + b"]" * 3000 + b"}",
        400,
        "invalid_request",
    ),
    (
        "deep_3000_definition",
        body(tools=b'[{"name":"t","definition":{"a":' + b"[" * 3000 + b"]" * 3000 + b"}}]"),
        400,
        "too_deep",
    ),
    (
        "deep_definition",
        body(tools=b'[{"name":"t","definition":' + nested(10) + b"}]"),
        400,
        "definition_too_deep",
    ),
    ("missing_pattern", b'{"tools":[]}', 400, "invalid_request"),
    ("missing_tools", b'{"pattern":"x"}', 400, "invalid_request"),
    ("top_k_string", body(extra=b',"top_k":"2"'), 400, "invalid_request"),
    ("top_k_float", body(extra=b',"top_k":2.5'), 400, "invalid_request"),
    ("top_k_zero", body(extra=b',"top_k":0'), 400, "invalid_request"),
    ("top_k_negative", body(extra=b',"top_k":-3'), 400, "invalid_request"),
    ("top_k_too_big", body(extra=b',"top_k":11'), 400, "top_k_out_of_range"),
    ("top_k_huge", body(extra=b',"top_k":1e999'), 400, "invalid_request"),
    ("pattern_empty", body(pattern=b'""'), 400, "invalid_request"),
    ("pattern_whitespace", body(pattern=b'" \\t\\n "'), 400, "invalid_request"),
    ("pattern_number", body(pattern=b"42"), 400, "invalid_request"),
    ("tools_not_list", body(tools=b'{"name":"t"}'), 400, "invalid_request"),
    ("tool_not_object", body(tools=b'["read_file"]'), 400, "invalid_request"),
    ("name_missing", body(tools=b'[{"description":"x"}]'), 400, "invalid_request"),
    ("name_empty", body(tools=b'[{"name":""}]'), 400, "invalid_request"),
    ("name_blank", body(tools=b'[{"name":"   "}]'), 400, "invalid_name"),
    ("name_control_char", body(tools=b'[{"name":"a\\u0000b"}]'), 400, "invalid_request"),
    ("name_newline", body(tools=b'[{"name":"a\\nb"}]'), 400, "invalid_request"),
    ("name_c1_next_line", body(tools=b'[{"name":"a\\u0085b"}]'), 400, "invalid_request"),
    ("name_c1_csi", body(tools=b'[{"name":"a\\u009b31m"}]'), 400, "invalid_request"),
    ("name_line_separator", body(tools=b'[{"name":"a\\u2028b"}]'), 400, "invalid_request"),
    ("name_too_long", body(tools=b'[{"name":"' + b"n" * 21 + b'"}]'), 400, "name_too_long"),
    ("name_number", body(tools=b'[{"name":7}]'), 400, "invalid_request"),
    (
        "description_too_long",
        body(tools=b'[{"name":"t","description":"' + b"d" * 101 + b'"}]'),
        400,
        "description_too_long",
    ),
    (
        "definition_description_too_long",
        body(tools=b'[{"name":"t","definition":{"description":"' + b"d" * 101 + b'"}}]'),
        400,
        "description_too_long",
    ),
    (
        "definition_not_object",
        body(tools=b'[{"name":"t","definition":"x"}]'),
        400,
        "invalid_request",
    ),
    ("too_many_tools", body(tools=b"[" + b",".join([OK_TOOL] * 6) + b"]"), 400, "too_many_tools"),
    ("always_keep_not_list", body(extra=b',"always_keep":"read_file"'), 400, "invalid_request"),
    ("always_keep_empty_name", body(extra=b',"always_keep":[""]'), 400, "invalid_name"),
    ("always_keep_control", body(extra=b',"always_keep":["a\\u0007"]'), 400, "invalid_name"),
    ("explain_not_bool", body(extra=b',"explain":"yes"'), 400, "invalid_request"),
    (
        "body_over_cap",
        body(tools=b'[{"name":"t","description":"' + b"x" * 30000 + b'"}]'),
        413,
        "payload_too_large",
    ),
]


#: The seed cases that have a twin in the compress contract (it has no ``explain``).
COMPRESS_CASES = [
    (name, payload.replace(b'"pattern"', b'"query"').replace(b'"top_k"', b'"max_tools"'), *rest)
    for name, payload, *rest in CASES
    if name != "explain_not_bool"
]
PATHS = [("/v1/tool-discovery/search", case) for case in CASES] + [
    ("/api/compress/tool-discovery/", case) for case in COMPRESS_CASES
]


@pytest.mark.parametrize(
    ("path", "case"),
    PATHS,
    ids=[f"{'compress' if 'compress' in p else 'search'}-{c[0]}" for p, c in PATHS],
)
def test_bad_input_is_a_clear_4xx(
    limited: ServiceProcess, path: str, case: tuple[str, bytes, int, str]
) -> None:
    _, payload, status, code = case
    r = httpx.post(
        limited.url + path,
        content=payload,
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert (r.status_code, r.json()["code"]) == (status, code)
    assert r.json()["detail"]
    if "compress" in path:
        assert (r.json()["success"], r.json()["error"]) == (False, code)
        assert r.json()["message"] == r.json()["detail"]


@pytest.mark.parametrize(
    ("parameters", "status", "detail"),
    [
        (nested(6), 200, None),
        (nested(7), 400, "tools[0].parameters nests deeper than 6 levels"),
        (b'{"description":"' + b"d" * 101 + b'"}', 400, "a description in tools[0].parameters"),
    ],
    ids=["at-the-limit", "past-the-limit", "long-description"],
)
def test_compress_parameters_are_checked_as_sent(
    limited: ServiceProcess, parameters: bytes, status: int, detail: str | None
) -> None:
    """The compress contract's ``parameters`` (a schema, wrapped in a level of the service's
    own) has the definition's limits, counted as sent, and its errors name ``parameters``
    (they named ``definition`` and refused a schema at the limit)."""
    payload = b'{"query":"read","tools":[{"name":"t","parameters":' + parameters + b"}]}"
    r = httpx.post(
        limited.url + "/api/compress/tool-discovery/",
        content=payload,
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert r.status_code == status
    if detail is not None:
        assert detail in r.json()["detail"]


def test_a_pattern_over_the_limit_is_cut_not_refused(limited: ServiceProcess) -> None:
    r = httpx.post(
        limited.url + "/v1/tool-discovery/search",
        content=body(pattern=b'"' + b"read the file " * 300 + b'"'),
        headers={"content-type": "application/json"},
    )
    assert (r.status_code, r.json()) == (200, {"selected_names": ["read_file"]})


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"],
    ids=["missing", "text", "form", "lookalike"],
)
def test_wrong_content_type_is_415(limited: ServiceProcess, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    r = httpx.post(limited.url + "/v1/tool-discovery/search", content=body(), headers=headers)
    assert (r.status_code, r.json()["code"]) == (415, "unsupported_media_type")


def test_json_with_charset_is_accepted(limited: ServiceProcess) -> None:
    r = httpx.post(
        limited.url + "/v1/tool-discovery/search",
        content=body(),
        headers={"content-type": "application/json; charset=utf-8"},
    )
    assert r.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/v1/tool-discovery/search", 405), ("POST", "/nope", 404)],
    ids=["wrong-method", "unknown-path"],
)
def test_routing_errors_use_the_same_shape(
    limited: ServiceProcess, method: str, path: str, status: int
) -> None:
    r = httpx.request(method, limited.url + path)
    assert r.status_code == status
    assert set(r.json()) == {"code", "detail"}


def test_errors_are_counted_by_code(limited: ServiceProcess) -> None:
    httpx.post(
        limited.url + "/v1/tool-discovery/search",
        content=b"[]",
        headers={"content-type": "application/json"},
    )
    metrics = httpx.get(limited.url + "/metrics").text
    assert 'tool_selector_errors_total{code="invalid_request",route="search"}' in metrics


def test_no_bad_input_crashed_the_server(limited: ServiceProcess) -> None:
    assert httpx.get(limited.url + "/healthz").status_code == 200
    assert "Traceback" not in limited.log()
