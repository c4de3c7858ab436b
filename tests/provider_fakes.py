"""A scripted stand-in for Anthropic ``/v1/messages`` and OpenAI ``/v1/responses`` on loopback.

It plays the model in a two-turn tool search: asked with no search answer yet, it calls the
search tool with the user's words; shown the answer, it calls the first tool the answer
loaded (checking that the tool is a deferred tool of the request, as the real APIs do).
Every request body is kept in ``requests`` for the test to read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SEARCH_TOOL = "gateway_search_tools"


@dataclass
class FakeProvider:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        content = message.get("content")
        if isinstance(content, str):
            return content
        for block in content or []:
            if isinstance(block, dict) and block.get("type") in ("text", "input_text"):
                return str(block["text"])
    return ""


def anthropic_turn(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant's next message for a Messages request."""
    messages = body["messages"]
    last = messages[-1]["content"]
    results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        block = {"name": SEARCH_TOOL, "input": {"query": _last_user_text(messages)}}
    else:
        deferred = {t["name"] for t in body["tools"] if t.get("defer_loading") is True}
        refs = [c["tool_name"] for c in results[0]["content"] if c["type"] == "tool_reference"]
        if not refs or any(r not in deferred for r in refs):
            raise ValueError(f"tool_reference names a tool that is not deferred: {refs}")
        block = {"name": refs[0], "input": {}}
    return {
        "id": f"msg_{len(messages)}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "tool_use", "id": f"toolu_{len(messages)}", **block}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _loaded_call(output: dict[str, Any]) -> dict[str, Any]:
    first = output["tools"][0]
    if first["type"] == "namespace":
        return {"name": first["tools"][0]["name"], "namespace": first["name"]}
    return {"name": first["name"]}


def openai_turn(body: dict[str, Any]) -> dict[str, Any]:
    """The model's next output for a Responses request."""
    items = body["input"]
    outputs = [i for i in items if i.get("type") == "tool_search_output"]
    if not outputs:
        text = _last_user_text([i for i in items if i.get("role") == "user"])
        item: dict[str, Any] = {
            "type": "tool_search_call",
            "id": "ts_1",
            "call_id": "call_search_1",
            "execution": "client",
            "status": "completed",
            "arguments": {"query": text},
        }
    else:
        item = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_fn_1",
            "arguments": "{}",
            "status": "completed",
            **_loaded_call(outputs[-1]),
        }
    return {
        "id": f"resp_{len(items)}",
        "object": "response",
        "created_at": 0,
        "model": body["model"],
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


class _Handler(BaseHTTPRequestHandler):
    provider: FakeProvider

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.provider.requests.append(body)
        turn = anthropic_turn if self.path.endswith("/messages") else openai_turn
        try:
            status, answer = 200, turn(body)
        except (KeyError, ValueError, IndexError) as exc:
            status, answer = 400, {"type": "error", "error": {"message": str(exc)}}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def fake_provider() -> Iterator[FakeProvider]:
    """The fake provider on a free loopback port, for the ``with`` block."""
    provider = FakeProvider(url="")
    handler = type("Handler", (_Handler,), {"provider": provider})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    provider.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
