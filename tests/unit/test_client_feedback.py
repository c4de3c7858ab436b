"""The client's feedback: an answer's search id, ``feedback`` never raising, and the provider
hooks reporting on their own what the model called after an earlier search."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tool_selector_client import (
    AsyncSelectorClient,
    SelectorClient,
    anthropic_tool_result,
    anthropic_tool_result_async,
    openai_tool_search_output,
)
from tool_selector_client.wire import FEEDBACK_PATH, SCOPE_HEADER, SEARCH_ID_HEADER

SID = "a" * 32
TOOLS = [
    {"name": "get_weather", "description": "Weather for a city", "defer_loading": True},
    {"name": "send_email", "description": "Send an email", "defer_loading": True},
]


class Service:
    """A stand-in service: answers searches with the first tool and an id, keeps feedback."""

    def __init__(self, feedback_status: int = 200) -> None:
        self.feedback: list[dict[str, Any]] = []
        self.scopes: list[str | None] = []
        self.feedback_status = feedback_status

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == FEEDBACK_PATH:
            self.feedback.append(body)
            answer = {"kept": True, "called": body["called"], "unshown": [], "duplicate": False}
            return httpx.Response(self.feedback_status, json=answer)
        self.scopes.append(request.headers.get(SCOPE_HEADER))
        names = {"selected_names": [body["tools"][0]["name"]]}
        return httpx.Response(200, json=names, headers={SEARCH_ID_HEADER: SID})


def client(service: Service, **options: Any) -> SelectorClient:
    return SelectorClient("http://svc", transport=httpx.MockTransport(service), **options)


def test_an_answer_carries_its_search_id_and_the_scope_is_sent() -> None:
    service = Service()
    with client(service, scope="team-a") as c:
        selection = c.select("weather", TOOLS)
    assert (selection.ok, selection.search_id) == (True, SID)
    assert service.scopes == ["team-a"]


def test_feedback_names_the_search_and_the_called_tools() -> None:
    service = Service()
    with client(service) as c:
        selection = c.select("weather", TOOLS)
        reported = c.feedback(selection, ["get_weather", "get_weather"])
    assert reported.kept
    assert service.feedback == [{"search_id": SID, "called": ["get_weather"]}]


@pytest.mark.parametrize(
    ("status", "reason"), [(404, "http_status"), (503, "http_status")], ids=["404", "503"]
)
def test_feedback_the_service_refuses_says_why(status: int, reason: str) -> None:
    with client(Service(feedback_status=status)) as c:
        reported = c.feedback(SID, [])
    assert (reported.kept, reported.reason, reported.status) == (False, reason, status)


def test_feedback_without_a_service_or_an_id_never_raises() -> None:
    with SelectorClient("http://127.0.0.1:9", timeout_s=0.5) as c:
        assert c.feedback(SID, ["x"]).reason == "connect_error"
        assert c.feedback("", ["x"]).reason == "no_search"


def _search(search_id: str, query: str) -> dict[str, Any]:
    """The model's search call, as the Anthropic hook receives it."""
    return {
        "type": "tool_use",
        "id": search_id,
        "name": "gateway_search_tools",
        "input": {"query": query},
    }


def _conversation(search_id: str, then_called: str) -> list[dict[str, Any]]:
    """A search call, its result, then the model calling a tool, then a second search."""
    return [
        {"role": "user", "content": "weather in Porto, then mail it"},
        {
            "role": "assistant",
            "content": [_search(search_id, "weather")],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": search_id, "content": []}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t2", "name": then_called, "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}],
        },
    ]


def test_the_anthropic_hook_reports_what_the_model_called_after_its_earlier_search() -> None:
    service = Service()
    first = _search("s1", "weather")
    second = _search("s2", "email")
    with client(service) as c:
        anthropic_tool_result(c, first, TOOLS)
        assert service.feedback == []
        anthropic_tool_result(c, second, TOOLS, messages=_conversation("s1", "get_weather"))
        c.close()  # the report went to the worker threads: wait for them
    assert service.feedback == [{"search_id": SID, "called": ["get_weather"]}]


def test_a_reported_search_is_reported_once_and_unknown_calls_not_at_all() -> None:
    service = Service()
    first = _search("s1", "weather")
    later = _search("s3", "x")

    async def run() -> None:
        async with AsyncSelectorClient("http://svc", transport=httpx.MockTransport(service)) as c:
            await anthropic_tool_result_async(c, first, TOOLS)
            conversation = _conversation("s1", "send_email")  # not shown: reported as none
            await anthropic_tool_result_async(c, later, TOOLS, messages=conversation)
            await anthropic_tool_result_async(c, later, TOOLS, messages=conversation)

    asyncio.run(run())
    assert service.feedback == [{"search_id": SID, "called": []}]


def test_the_openai_hook_reports_from_the_responses_input() -> None:
    service = Service()
    call = {"type": "tool_search_call", "call_id": "c1", "arguments": {"query": "weather"}}
    functions = [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather",
            "defer_loading": True,
        },
        {"type": "function", "name": "send_email", "description": "Email", "defer_loading": True},
    ]
    conversation = [
        call,
        {"type": "tool_search_output", "call_id": "c1", "tools": []},
        {"type": "function_call", "call_id": "f1", "name": "get_weather", "arguments": "{}"},
    ]
    next_call = {"type": "tool_search_call", "call_id": "c2", "arguments": {"query": "email"}}
    with client(service) as c:
        openai_tool_search_output(c, call, functions)
        openai_tool_search_output(c, next_call, functions, conversation=conversation)
        c.close()
    assert service.feedback == [{"search_id": SID, "called": ["get_weather"]}]
