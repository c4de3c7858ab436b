"""OpenAI Responses with deferred tools; tool-selector answers the client-executed tool_search.

Run: TOOL_SELECTOR_URL=http://127.0.0.1:8080 OPENAI_API_KEY=... python openai_tool_search.py
"""

import os

import openai

from tool_selector_client import SelectorClient, openai_tool_search_output, openai_tool_search_tool


def function(name: str, description: str, **properties: dict) -> dict:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    schema["additionalProperties"] = False
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": schema,
        "strict": True,
        "defer_loading": True,
    }


TOOLS = [
    openai_tool_search_tool(),  # type: tool_search, execution: client
    function("get_weather", "Current weather and forecast for a city", city={"type": "string"}),
    {
        "type": "namespace",
        "name": "crm",
        "description": "Customer records: look up, update and annotate customers",
        "tools": [
            function("get_customer", "Look up a customer by email", email={"type": "string"}),
            function("add_note", "Add a note to a customer record", text={"type": "string"}),
        ],
    },
]

model = openai.OpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL
selector = SelectorClient(os.environ.get("TOOL_SELECTOR_URL", "http://127.0.0.1:8080"))
items: list = [{"role": "user", "content": "Find the customer with email ada@example.com"}]
for _ in range(4):
    reply = model.responses.create(model="gpt-5.5", tools=TOOLS, input=items)
    items += [item.model_dump(exclude_none=True) for item in reply.output]
    calls = [item for item in reply.output if item.type == "tool_search_call"]
    if not calls:
        break
    answers = [openai_tool_search_output(selector, c, TOOLS, conversation=items) for c in calls]
    print(
        "loaded:", *[name for a in answers for name in a.names], "| fail-open:", answers[0].reason
    )
    items += [a.output for a in answers]
for item in reply.output:
    if item.type == "function_call":
        print("model calls:", f"{item.namespace}.{item.name}" if item.namespace else item.name)
selector.close()
