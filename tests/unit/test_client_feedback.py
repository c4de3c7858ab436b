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


def openai_feedback(tools: list[Any], called: dict[str, Any]) -> list[dict[str, Any]]:
    """The feedback the OpenAI hook sends for a first search once a second search comes
    after the model's ``called`` item (a Responses ``function_call``)."""
    service = Service()
    call = {"type": "tool_search_call", "call_id": "c1", "arguments": {"query": "first"}}
    conversation = [call, {"type": "tool_search_output", "call_id": "c1", "tools": []}, called]
    next_call = {"type": "tool_search_call", "call_id": "c2", "arguments": {"query": "next"}}
    with client(service) as c:
        openai_tool_search_output(c, call, tools)
        openai_tool_search_output(c, next_call, tools, conversation=conversation)
        c.close()
    return service.feedback


def test_the_openai_hook_reports_from_the_responses_input() -> None:
    functions = [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather",
            "defer_loading": True,
        },
        {"type": "function", "name": "send_email", "description": "Email", "defer_loading": True},
    ]
    called = {"type": "function_call", "call_id": "f1", "name": "get_weather", "arguments": "{}"}
    assert openai_feedback(functions, called) == [{"search_id": SID, "called": ["get_weather"]}]


class ByQuery(Service):
    """Answers each search with the tool its pattern names (``weather`` or ``email``), under
    an id of its own."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == FEEDBACK_PATH:
            return super().__call__(request)
        name = "get_weather" if "weather" in body["pattern"] else "send_email"
        sid = ("a" if name == "get_weather" else "b") * 32
        return httpx.Response(200, json={"selected_names": [name]}, headers={SEARCH_ID_HEADER: sid})


def _parallel_conversation(upto: int) -> list[dict[str, Any]]:
    """Two searches in one assistant turn, their results, then both tools called together."""
    turns: list[dict[str, Any]] = [
        {"role": "user", "content": "weather in Porto and mail it to Ana"},
        {"role": "assistant", "content": [_search("s1", "weather"), _search("s2", "email")]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": s, "content": []} for s in ("s1", "s2")
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t3", "name": "get_weather", "input": {}},
                {"type": "tool_use", "id": "t4", "name": "send_email", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": t, "content": "ok"} for t in ("t3", "t4")
            ],
        },
        {"role": "assistant", "content": [_search("s5", "weather again")]},
    ]
    return turns[:upto]


def test_searches_of_one_turn_are_reported_after_the_calls_that_follow_them() -> None:
    """Answering the second of two searches made together reported the first as "called
    none" (its calls still to come), and its real call was never reported."""
    service = ByQuery()
    with client(service) as c:
        anthropic_tool_result(
            c, _search("s1", "weather"), TOOLS, messages=_parallel_conversation(2)
        )
        anthropic_tool_result(c, _search("s2", "email"), TOOLS, messages=_parallel_conversation(2))
        assert service.feedback == []
        later = _search("s5", "weather again")
        anthropic_tool_result(c, later, TOOLS, messages=_parallel_conversation(6))
        c.close()
    assert sorted(service.feedback, key=lambda f: f["search_id"]) == [
        {"search_id": "a" * 32, "called": ["get_weather"]},
        {"search_id": "b" * 32, "called": ["send_email"]},
    ]


def test_a_namespace_member_called_is_reported_under_its_ranked_name() -> None:
    """A Responses ``function_call`` names a namespace's member bare, its namespace apart:
    it was reported as "called none" (negative evidence for the tool the model used)."""
    crm = {
        "type": "namespace",
        "name": "crm",
        "description": "CRM",
        "tools": [
            {"type": "function", "name": n, "description": n, "defer_loading": True}
            for n in ("get_customer", "add_note")
        ],
    }
    called = {"type": "function_call", "call_id": "f1", "name": "get_customer", "namespace": "crm"}
    assert openai_feedback([crm], called) == [{"search_id": SID, "called": ["crm.get_customer"]}]


def test_the_async_hook_sends_its_feedback_beside_its_search() -> None:
    """The feedback owed was awaited before the search, each within its own timeout: a
    service slow to take feedback held the search. Here the feedback is answered only once
    the search has come: one after the other, it times out and is lost."""
    searched = asyncio.Event()
    taken: list[dict[str, Any]] = []

    async def service(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == FEEDBACK_PATH:
            await searched.wait()
            taken.append(body)
            return httpx.Response(200, json={"kept": True, "called": [], "unshown": []})
        searched.set()
        names = {"selected_names": [body["tools"][0]["name"]]}
        return httpx.Response(200, json=names, headers={SEARCH_ID_HEADER: SID})

    async def run() -> None:
        transport = httpx.MockTransport(service)
        async with AsyncSelectorClient("http://svc", transport=transport, timeout_s=2.0) as c:
            await anthropic_tool_result_async(c, _search("s1", "weather"), TOOLS)
            searched.clear()
            conversation = _conversation("s1", "get_weather")
            await anthropic_tool_result_async(c, _search("s2", "x"), TOOLS, messages=conversation)

    asyncio.run(run())
    assert taken == [{"search_id": SID, "called": ["get_weather"]}]


def test_no_feedback_is_sent_while_the_breaker_is_open_and_it_stays_owed() -> None:
    service = Service()
    with client(service) as c:
        anthropic_tool_result(c, _search("s1", "weather"), TOOLS)
        for _ in range(c.breaker.threshold):
            c.breaker.record(False)
        assert c.breaker.state == "open"
        c.report_calls({"s1": ("get_weather",)})
        assert service.feedback == []
        c.breaker.record(True)
        c.report_calls({"s1": ("get_weather",)})
        c.close()
    assert service.feedback == [{"search_id": SID, "called": ["get_weather"]}]


def test_the_hooks_never_raise_on_what_the_caller_or_the_model_wrote() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with client(Service()) as c:
        none = anthropic_tool_result(c, _search("s1", "weather"), TOOLS, always_keep=None)  # type: ignore[arg-type]
        call = {"type": "tool_search_call", "call_id": "c1", "arguments": deep}
        odd = openai_tool_search_output(c, call, TOOLS, always_keep=None)  # type: ignore[arg-type]
    assert none.names == ("get_weather",)
    assert odd.output["type"] == "tool_search_output"


@pytest.mark.parametrize("timeout_s", [None, "1", 0, -1.0, float("nan"), float("inf")])
def test_a_client_without_a_deadline_is_refused_at_construction(timeout_s: Any) -> None:
    """``timeout_s=None`` (httpx's "no timeout") made every ``select`` raise a TypeError."""
    with pytest.raises((TypeError, ValueError), match="timeout_s"):
        SelectorClient("http://svc", timeout_s=timeout_s)


def test_searches_noted_past_the_bound_are_counted() -> None:
    with client(ByQuery(), noted=2) as c:
        for i in range(5):
            anthropic_tool_result(c, _search(f"s{i}", "weather"), TOOLS)
        assert c.noted_dropped == 3
