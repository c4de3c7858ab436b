"""Anthropic Messages with deferred tools; tool-selector answers the model's tool search.

Run: TOOL_SELECTOR_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY=... python anthropic_tool_search.py
"""

import os

import anthropic

from tool_selector_client import (
    SEARCH_TOOL_NAME,
    SelectorClient,
    anthropic_search_tool,
    anthropic_tool_result,
)


def deferred(name: str, description: str, **properties: dict) -> dict:
    schema = {"type": "object", "properties": properties}
    return {"name": name, "description": description, "input_schema": schema, "defer_loading": True}


TOOLS = [
    anthropic_search_tool(),  # the one tool the model sees up front
    deferred("get_weather", "Current weather and forecast for a city", city={"type": "string"}),
    deferred("send_email", "Send an email to a recipient", to={"type": "string"}),
    deferred("create_event", "Add an event to the user's calendar", title={"type": "string"}),
    deferred("search_flights", "Find flights between two airports", origin={"type": "string"}),
]

model = anthropic.Anthropic()  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
selector = SelectorClient(os.environ.get("TOOL_SELECTOR_URL", "http://127.0.0.1:8080"))
messages: list = [{"role": "user", "content": "Will it rain in Paris tomorrow?"}]
for _ in range(4):
    reply = model.messages.create(
        model="claude-opus-4-7", max_tokens=1024, tools=TOOLS, messages=messages
    )
    messages.append({"role": "assistant", "content": reply.content})
    searches = [b for b in reply.content if b.type == "tool_use" and b.name == SEARCH_TOOL_NAME]
    if not searches:
        break
    answers = [anthropic_tool_result(selector, b, TOOLS, messages=messages) for b in searches]
    print(
        "loaded:", *[name for a in answers for name in a.names], "| fail-open:", answers[0].reason
    )
    messages.append({"role": "user", "content": [a.output for a in answers]})
for block in reply.content:
    if block.type == "tool_use":
        print("model calls:", block.name)
selector.close()
