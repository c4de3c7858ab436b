"""The two wire contracts: how the compress one is adapted, and each one's error body."""

import json

import msgspec
import pytest

from tool_selector.http.edge import error_bytes
from tool_selector.pipeline.contracts import compress_tool
from tool_selector_client.wire import CompressTool

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
ANTHROPIC = {"name": "read", "description": "Read a file", "input_schema": SCHEMA}


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
