"""The provider hooks' shapes, checked against the providers' own SDK types, and their
fail-open answers (no service: a closed port)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest
from agents import Agent, ModelBehaviorError, ToolSearchTool, Usage
from agents.items import ModelResponse, coerce_tool_search_output_raw_item
from agents.models.openai_responses import Converter
from agents.run_internal.turn_resolution import process_model_response
from anthropic.types import ToolParam, ToolReferenceBlockParam, ToolResultBlockParam
from openai.types.responses import (
    ResponseInputItemParam,
    ResponseToolSearchCall,
    ResponseToolSearchOutputItem,
    ToolSearchToolParam,
)
from openai.types.responses.response_tool_search_output_item_param_param import (
    ResponseToolSearchOutputItemParamParam,
)
from prometheus_client import CollectorRegistry
from pydantic import TypeAdapter

from tests.support import SERVICE_DIR
from tool_selector_client import (
    AsyncSelectorClient,
    ClientMetrics,
    Filters,
    SelectorClient,
    anthropic_search_tool,
    anthropic_tool_result,
    anthropic_tool_result_async,
    openai_deferred,
    openai_tool_search_output,
    openai_tool_search_output_async,
    openai_tool_search_tool,
)
from tool_selector_client.anthropic_search import anthropic_context
from tool_selector_client.openai_search import openai_context
from tool_selector_client.providers import query_of

CLOSED = "http://127.0.0.1:9"  # nothing listens: every call fails open with connect_error


def _anthropic(name: str, description: str, deferred: bool = True) -> dict[str, Any]:
    tool = {"name": name, "description": description, "input_schema": {"type": "object"}}
    return {**tool, "defer_loading": True} if deferred else tool


ANTHROPIC_TOOLS = [
    anthropic_search_tool(),
    _anthropic("get_weather", "Current weather for a city"),
    _anthropic("send_email", "Send an email message"),
    _anthropic("send_sms", "Send a text message to a phone"),
    _anthropic("read_file", "Read a file", deferred=False),
]


def _function(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {}},
        "strict": False,
        "defer_loading": True,
    }


OPENAI_TOOLS = [
    openai_tool_search_tool(),
    _function("get_weather", "Current weather for a city"),
    {"type": "function", "name": "now", "parameters": None, "strict": None},  # not deferred
    {
        "type": "namespace",
        "name": "crm",
        "description": "Customer records",
        "tools": [
            _function("get_customer", "Look up a customer by email"),
            _function("add_note", "Add a note to a customer"),
        ],
    },
]
CALL = {
    "type": "tool_search_call",
    "id": "ts_1",
    "call_id": "call_1",
    "execution": "client",
    "status": "completed",
    "arguments": {"query": "customer note"},
}


def _use(query: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "gateway_search_tools",
        "input": {"query": query},
    }


def test_the_anthropic_search_tool_is_an_sdk_tool_param() -> None:
    tool = anthropic_search_tool()
    assert TypeAdapter(ToolParam).validate_python(tool) == tool
    assert "defer_loading" not in tool


def test_the_anthropic_tool_result_is_sdk_shaped_and_fails_open_to_a_keyword_pick() -> None:
    registry = CollectorRegistry()
    with SelectorClient(CLOSED, timeout_s=2) as client:
        answer = anthropic_tool_result(
            client, _use("send an email"), ANTHROPIC_TOOLS, metrics=ClientMetrics(registry)
        )
    block = answer.output
    TypeAdapter(ToolResultBlockParam).validate_python(block)
    for ref in block["content"]:
        assert TypeAdapter(ToolReferenceBlockParam).validate_python(ref) == ref
    assert (answer.reason, answer.fallback) == ("connect_error", "keyword")
    assert answer.names[0] == "send_email"
    assert "read_file" not in answer.names
    assert block["tool_use_id"] == "toolu_1"
    counted = registry.get_sample_value(
        "tool_selector_client_outcomes_total", {"mode": "enforce", "outcome": "connect_error"}
    )
    assert counted == 1


def test_with_no_keyword_match_fail_open_loads_every_deferred_tool_the_filters_permit() -> None:
    with SelectorClient(CLOSED, timeout_s=2) as client:
        answer = anthropic_tool_result(
            client, _use("qzxv"), ANTHROPIC_TOOLS, filters=Filters(deny=["send_sms"])
        )
    assert answer.fallback == "all"
    assert answer.names == ("get_weather", "send_email")


def test_the_async_anthropic_answer_fails_open_the_same_way() -> None:
    async def go() -> tuple[str, ...]:
        async with AsyncSelectorClient(CLOSED, timeout_s=2) as client:
            answer = await anthropic_tool_result_async(client, _use("weather"), ANTHROPIC_TOOLS)
        return answer.names

    assert asyncio.run(go()) == ("get_weather",)


def test_an_empty_query_fails_open_without_a_call() -> None:
    with SelectorClient(CLOSED, timeout_s=2) as client:
        answer = anthropic_tool_result(client, _use(" "), ANTHROPIC_TOOLS)
    assert (answer.reason, answer.fallback) == ("empty_pattern", "all")


def test_the_openai_tool_search_tool_is_an_sdk_param() -> None:
    tool = openai_tool_search_tool()
    assert TypeAdapter(ToolSearchToolParam).validate_python(tool) == tool
    assert tool["execution"] == "client"


def test_openai_deferred_reads_functions_and_namespace_members() -> None:
    assert list(openai_deferred(OPENAI_TOOLS)) == [
        "get_weather",
        "crm.get_customer",
        "crm.add_note",
    ]


def test_the_openai_output_regroups_namespace_members_and_is_sdk_shaped() -> None:
    with SelectorClient(CLOSED, timeout_s=2) as client:
        answer = openai_tool_search_output(client, CALL, OPENAI_TOOLS)
    item = answer.output
    assert answer.names == ("crm.add_note", "crm.get_customer")
    assert item["tools"] == [
        {**OPENAI_TOOLS[3], "tools": [OPENAI_TOOLS[3]["tools"][1], OPENAI_TOOLS[3]["tools"][0]]}
    ]
    assert (item["type"], item["call_id"], item["execution"]) == (
        "tool_search_output",
        "call_1",
        "client",
    )
    TypeAdapter(ResponseToolSearchOutputItemParamParam).validate_python(item)
    TypeAdapter(ResponseInputItemParam).validate_python(item)
    parsed = ResponseToolSearchOutputItem.model_validate({**item, "id": "tso_1"})
    assert parsed.model_dump(exclude_unset=True) == {**item, "id": "tso_1"}


def test_the_async_openai_answer_reads_an_sdk_call_and_json_arguments() -> None:
    call = ResponseToolSearchCall.model_validate({**CALL, "arguments": '{"query": "weather"}'})

    async def go() -> dict[str, Any]:
        async with AsyncSelectorClient(CLOSED, timeout_s=2) as client:
            answer = await openai_tool_search_output_async(client, call, OPENAI_TOOLS)
        return answer.output

    assert asyncio.run(go())["tools"] == [OPENAI_TOOLS[1]]


@pytest.mark.parametrize(
    ("arguments", "query"),
    [
        ({"query": "a b"}, "a b"),
        ('{"query": "a"}', "a"),
        ({"paths": ["crm", "get_weather"]}, "crm get_weather"),
        ("not json", "not json"),
        (None, ""),
    ],
)
def test_query_of_reads_what_the_model_sent(arguments: Any, query: str) -> None:
    assert query_of(arguments) == query


def test_the_conversation_goes_as_context() -> None:
    messages = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}, _use("x")]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "read_file", "input": {}}],
        },
    ]
    context = anthropic_context(messages)
    assert context is not None
    assert (context.messages, context.recent_tools) == (["hello", "hi"], ["read_file"])
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "find ada"}]},
        {"type": "function_call", "name": "now", "call_id": "c", "arguments": "{}"},
    ]
    context = openai_context(items)
    assert context is not None
    assert (context.messages, context.recent_tools) == (["find ada"], ["now"])


def test_the_agents_sdk_has_no_client_tool_search_executor() -> None:
    """openai-agents 0.24.0: ``ToolSearchTool(execution="client")`` is sent as ours is, and
    the runner refuses a client ``tool_search_call`` (docs/apps.md says so; this pins it)."""
    ours = openai_tool_search_tool()
    sdk_tool = ToolSearchTool(
        description=ours["description"], execution="client", parameters=ours["parameters"]
    )
    assert Converter._convert_tool(sdk_tool)[0] == ours
    agent = Agent(name="a", tools=[sdk_tool])
    call = ResponseToolSearchCall.model_validate(CALL)
    response = ModelResponse(output=[call], usage=Usage(), response_id=None)
    with pytest.raises(ModelBehaviorError, match="not supported by the standard agent runner"):
        process_model_response(
            agent=agent, all_tools=[sdk_tool], response=response, output_schema=None, handoffs=[]
        )
    with SelectorClient(CLOSED, timeout_s=2) as client:
        item = openai_tool_search_output(client, CALL, OPENAI_TOOLS).output
    assert coerce_tool_search_output_raw_item(item)["tools"] == item["tools"]


PROBE = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
from tool_selector_client import SelectorClient, anthropic_tool_result, openai_tool_search_output
use = {{"id": "t", "name": "gateway_search_tools", "input": {{"query": "weather"}}}}
call = {{"call_id": "c", "arguments": {{"query": "weather"}}}}
weather = {{"name": "get_weather", "description": "weather", "defer_loading": True}}
with SelectorClient("http://127.0.0.1:9", timeout_s=0.5) as c:
    a = anthropic_tool_result(c, use, [weather])
    o = openai_tool_search_output(c, call, [{{"type": "function", **weather}}])
print(a.reason, a.names, o.names)
"""


def test_the_hooks_need_no_sdk_and_no_server_package() -> None:
    blocked = ("anthropic", "openai", "agents", "pydantic", "tool_selector", "litestar", "numpy")
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(blocked=blocked)],
        env={"PYTHONPATH": str(SERVICE_DIR)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.split() == ["connect_error", "('get_weather',)", "('get_weather',)"]
