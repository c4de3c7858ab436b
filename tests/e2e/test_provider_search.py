"""The provider hooks end to end: the real SDK clients against a fake provider on loopback,
the search answered by the real service, the found tool then called; and the examples of
docs/apps.md, run as they are written."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.provider_fakes import fake_provider
from tests.support import ROOT, SERVICE_DIR, ServiceProcess
from tool_selector_client import (
    AsyncSelectorClient,
    SearchAnswer,
    SelectorClient,
    anthropic_search_tool,
    anthropic_tool_result,
    anthropic_tool_result_async,
    openai_tool_search_output,
    openai_tool_search_tool,
)

EXAMPLES = ROOT / "examples"


def _deferred(name: str, description: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    return {"name": name, "description": description, "input_schema": schema, "defer_loading": True}


ANTHROPIC_TOOLS = [
    anthropic_search_tool(),
    _deferred("get_weather", "Current weather and forecast for a city"),
    _deferred("send_email", "Send an email message to a recipient"),
    _deferred("create_invoice", "Create an invoice for a customer"),
    {
        "name": "read_file",
        "description": "Read a file from disk",
        "input_schema": {"type": "object"},
    },
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
    _function("get_weather", "Current weather and forecast for a city"),
    {
        "type": "namespace",
        "name": "crm",
        "description": "Customer records",
        "tools": [
            _function("get_customer", "Look up a customer record by email address"),
            _function("add_note", "Add a note to a customer record"),
        ],
    },
]


def test_anthropic_two_turns_search_then_call(service: ServiceProcess) -> None:
    with fake_provider() as fake, SelectorClient(service.url, timeout_s=10) as selector:
        model = anthropic.Anthropic(base_url=fake.url, api_key="test")
        messages: list[Any] = [{"role": "user", "content": "email the report to my boss"}]
        first = model.messages.create(
            model="m", max_tokens=64, tools=ANTHROPIC_TOOLS, messages=messages
        )
        search = first.content[0]
        assert search.type == "tool_use"
        assert search.name == "gateway_search_tools"
        answer = anthropic_tool_result(selector, search, ANTHROPIC_TOOLS, messages=messages)
        assert answer.reason is None
        assert answer.names[0] == "send_email"
        messages += [
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [answer.output]},
        ]
        second = model.messages.create(
            model="m", max_tokens=64, tools=ANTHROPIC_TOOLS, messages=messages
        )
    sent = fake.requests[-1]["messages"][-1]["content"][0]
    assert sent == answer.output  # the SDK's serialisation kept our block as it is
    assert second.content[0].type == "tool_use"
    assert second.content[0].name == "send_email"


def test_anthropic_async_answer_names_only_deferred_tools(service: ServiceProcess) -> None:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "gateway_search_tools"}
    tool_use["input"] = {"query": "read the file config.yaml and email it to the team"}

    async def go() -> SearchAnswer:
        async with AsyncSelectorClient(service.url, timeout_s=10) as selector:
            return await anthropic_tool_result_async(selector, tool_use, ANTHROPIC_TOOLS)

    answer = asyncio.run(go())
    assert answer.reason is None
    assert "read_file" not in answer.names  # not deferred: never a tool_reference
    assert set(answer.names) <= {"get_weather", "send_email", "create_invoice"}


def test_anthropic_min_score_gives_an_honest_empty_result(service: ServiceProcess) -> None:
    tool_use = {"id": "toolu_1", "name": "gateway_search_tools", "input": {"query": "qzxv wplk"}}
    with SelectorClient(service.url, timeout_s=10) as selector:
        answer = anthropic_tool_result(selector, tool_use, ANTHROPIC_TOOLS, min_score=0.99)
    assert answer.reason is None
    assert answer.names == ()
    assert answer.output["content"][0]["type"] == "text"


def test_openai_two_turns_search_then_call_in_a_namespace(service: ServiceProcess) -> None:
    with fake_provider() as fake, SelectorClient(service.url, timeout_s=10) as selector:
        model = openai.OpenAI(base_url=fake.url + "/v1", api_key="test")
        items: list[Any] = [{"role": "user", "content": "look up the customer ada@example.com"}]
        first = model.responses.create(model="m", tools=OPENAI_TOOLS, input=items)
        call = first.output[0]
        assert call.type == "tool_search_call"
        assert call.execution == "client"
        answer = openai_tool_search_output(selector, call, OPENAI_TOOLS, conversation=items)
        assert answer.reason is None
        assert answer.names[0] == "crm.get_customer"
        items += [call.model_dump(exclude_none=True), answer.output]
        second = model.responses.create(model="m", tools=OPENAI_TOOLS, input=items)
    assert fake.requests[-1]["input"][-1] == answer.output
    fn = second.output[0]
    assert fn.type == "function_call"
    assert (fn.namespace, fn.name) == ("crm", "get_customer")


@pytest.mark.parametrize(
    ("script", "expect"),
    [
        ("anthropic_tool_search.py", "model calls: get_weather"),
        ("openai_tool_search.py", "model calls: crm.get_customer"),
    ],
)
def test_the_apps_page_examples_run(service: ServiceProcess, script: str, expect: str) -> None:
    source = (EXAMPLES / script).read_text()
    assert source.strip() in (ROOT / "docs" / "apps.md").read_text()
    with fake_provider() as fake:
        env = {
            **os.environ,
            "PYTHONPATH": str(SERVICE_DIR),
            "TOOL_SELECTOR_URL": service.url,
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "test",
            "OPENAI_BASE_URL": fake.url + "/v1",
            "OPENAI_API_KEY": "test",
        }
        out = subprocess.run(
            [sys.executable, str(EXAMPLES / script)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert out.returncode == 0, out.stderr
    assert "fail-open: None" in out.stdout
    assert out.stdout.strip().endswith(expect)


def test_examples_are_in_the_repository() -> None:
    assert {p.name for p in Path(EXAMPLES).glob("*.py")} >= {
        "anthropic_tool_search.py",
        "openai_tool_search.py",
    }
