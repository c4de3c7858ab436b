"""The two wire contracts: which one a body speaks, and how the compress one is adapted."""

import json

import msgspec
import pytest

from tool_selector.pipeline.contracts import (
    COMPRESS,
    SEARCH,
    compress_tool,
    contract_for,
    error_bytes,
)
from tool_selector_client.wire import CompressTool

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
ANTHROPIC = {"name": "read", "description": "Read a file", "input_schema": SCHEMA}


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        ("/v1/tool-discovery/search", b'{"query":"x","tools":[]}', SEARCH),
        ("/api/compress/tool-discovery/", b'{"query":"x","tools":[]}', COMPRESS),
        ("/api/compress/tool-discovery", b'{"query":"x","tools":[]}', COMPRESS),
        ("/api/compress/tool-discovery/", b'{"pattern":"x","tools":[]}', SEARCH),
        ("/api/compress/tool-discovery/", b'{"pattern":"x","query":"y"}', COMPRESS),
        ("/api/compress/tool-discovery/", b"[]", COMPRESS),
        ("/api/compress/tool-discovery/", b"{not json", COMPRESS),
    ],
    ids=["search-path", "compress", "no-slash", "v0.5.2-body", "both", "array", "garbage"],
)
def test_contract_for(path: str, body: bytes, expected: object) -> None:
    assert contract_for(path, body) is expected


@pytest.mark.parametrize(
    ("tool", "definition"),
    [
        (CompressTool(name="read", parameters=ANTHROPIC), ANTHROPIC),
        (CompressTool(name="read", parameters=SCHEMA), {"parameters": SCHEMA}),
        (CompressTool(name="read", definition=ANTHROPIC, parameters=SCHEMA), ANTHROPIC),
        (CompressTool(name="read"), None),
    ],
    ids=["raw-object", "schema", "definition-wins", "bare"],
)
def test_compress_tool_reads_parameters_either_way(tool: CompressTool, definition: object) -> None:
    assert compress_tool(tool).definition == definition


def test_compress_errors_carry_both_shapes() -> None:
    body = json.loads(error_bytes("/api/compress/tool-discovery", "x_code", "why"))
    assert body == {
        "success": False,
        "error": "x_code",
        "message": "why",
        "code": "x_code",
        "detail": "why",
    }


def test_search_errors_keep_their_shape() -> None:
    assert msgspec.json.decode(error_bytes("/v1/tool-discovery/search", "c", "d")) == {
        "code": "c",
        "detail": "d",
    }
