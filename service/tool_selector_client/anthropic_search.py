"""Anthropic Messages: a custom tool search whose ``tool_result`` loads deferred tools.

The documented hook beside Anthropic's own regex/BM25 tool search: tools marked
``"defer_loading": true`` stay out of the model's context; the model calls a search tool of
ours (``anthropic_search_tool``), and the answer is a ``tool_result`` whose content holds
``{"type": "tool_reference", "tool_name": ...}`` blocks; the API then loads those tools'
definitions. Every name must be a deferred tool of the request, so only those are ever sent
to the service and named back. Shapes match the ``anthropic`` SDK's ``ToolParam``,
``ToolResultBlockParam`` and ``ToolReferenceBlockParam`` (the tests validate them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from tool_selector_client.core import listed
from tool_selector_client.definitions import SEARCH_TOOL_NAME, tool_name
from tool_selector_client.metrics import ClientMetrics
from tool_selector_client.providers import (
    QUERY_SCHEMA,
    DeferredSearch,
    Options,
    calls_after_searches,
    context_of,
    field_of,
    hooks,
    query_of,
    sent_context,
)
from tool_selector_client.wire import Budget, Context, Filters

__all__ = [
    "ANTHROPIC_SEARCH_DESCRIPTION",
    "NO_MATCH_TEXT",
    "anthropic_context",
    "anthropic_deferred",
    "anthropic_search_tool",
    "anthropic_tool_result",
    "anthropic_tool_result_async",
]

ANTHROPIC_SEARCH_DESCRIPTION = (
    "Search the deferred tools by what you need to do and load the ones that fit. Call it "
    "whenever the tool you need is not in your list yet; the tools it finds become callable."
)
#: The ``tool_result`` text when nothing reached the caller's ``min_score``.
NO_MATCH_TEXT = "No deferred tool matches this search."


def anthropic_search_tool(
    name: str = SEARCH_TOOL_NAME, description: str = ANTHROPIC_SEARCH_DESCRIPTION
) -> dict[str, Any]:
    """The search tool to add to a request's ``tools`` (never deferred itself)."""
    return {"name": name, "description": description, "input_schema": dict(QUERY_SCHEMA)}


def anthropic_deferred(tools: Iterable[Any]) -> list[Any]:
    """The request's tools marked ``"defer_loading": true`` that have a usable name."""
    return [
        t
        for t in tools
        if isinstance(t, Mapping) and t.get("defer_loading") is True and tool_name(t) is not None
    ]


def anthropic_context(
    messages: Iterable[Any], search_tool: str = SEARCH_TOOL_NAME
) -> Context | None:
    """The conversation as the service's ``context``: each message's text, oldest first,
    and the tools called (``tool_use`` names, our search tool left out)."""
    texts: list[str] = []
    called: list[str] = []
    for message in messages:
        content = field_of(message, "content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content if isinstance(content, Sequence) else ():
            kind = field_of(block, "type")
            if kind == "text" and isinstance(field_of(block, "text"), str):
                texts.append(field_of(block, "text"))
            elif kind == "tool_use" and field_of(block, "name") != search_tool:
                called.append(str(field_of(block, "name") or ""))
    return context_of(texts, called)


def _search(
    tool_use: Any,
    tools: Iterable[Any],
    *,
    messages: Iterable[Any] | None = None,
    top_k: int | None = None,
    always_keep: Iterable[str] = (),
    filters: Filters | None = None,
    budget: Budget | None = None,
    min_score: float | None = None,
    context: Context | None = None,
    metrics: ClientMetrics | None = None,
) -> DeferredSearch:
    """The ``tool_result`` answering the model's ``tool_use`` of our search tool; never raises.

    ``tools`` is the request's ``tools`` (only the deferred ones are searched); ``messages``
    the conversation so far (sent as ``context`` unless ``context`` is given). With
    ``min_score`` and nothing reaching it, the result says so instead of loading anything.
    """
    options = Options(
        top_k, tuple(listed(always_keep)), filters, budget, min_score, context, metrics
    )
    sent = sent_context(options, messages, partial(_conversation, tool_use))
    query = query_of(field_of(tool_use, "input"))
    output = partial(_tool_result, tool_use)
    key = str(field_of(tool_use, "id") or "")
    earlier = _earlier(tool_use, messages) if messages is not None else {}
    deferred = anthropic_deferred(listed(tools))
    return DeferredSearch(query, deferred, options, sent, output, key, earlier)


def _earlier(tool_use: Any, messages: Iterable[Any]) -> dict[str, tuple[str, ...]]:
    """What the model called after each earlier search of the conversation (``Calls``);
    nothing when the conversation cannot be read."""
    try:
        steps = [
            (str(field_of(b, "id") or ""), str(field_of(b, "name") or ""), turn)
            for turn, m in enumerate(listed(messages))
            for b in _blocks(field_of(m, "content"))
            if field_of(b, "type") == "tool_use"
        ]
    except Exception:  # the caller's odd conversation loses only the feedback
        return {}
    search_tool = str(field_of(tool_use, "name") or SEARCH_TOOL_NAME)
    return calls_after_searches(steps, search_tool, str(field_of(tool_use, "id") or ""))


def _blocks(content: Any) -> list[Any]:
    return [] if isinstance(content, str) else listed(content)


def _conversation(tool_use: Any, messages: Iterable[Any]) -> Context | None:
    return anthropic_context(messages, field_of(tool_use, "name") or SEARCH_TOOL_NAME)


def _tool_result(tool_use: Any, names: tuple[str, ...]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "tool_reference", "tool_name": n} for n in names]
    if not content:
        content = [{"type": "text", "text": NO_MATCH_TEXT}]
    return {"type": "tool_result", "tool_use_id": field_of(tool_use, "id"), "content": content}


anthropic_tool_result, anthropic_tool_result_async = hooks(_search, "anthropic_tool_result")
