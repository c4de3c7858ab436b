"""Companion client and wire types for the tool-selector service.

Depends on msgspec and httpx only, so a proxy can install it without the server's
model and ranking dependencies. ``prometheus-client`` is optional (``ClientMetrics``).

Names are imported lazily (PEP 562): the server imports ``tool_selector_client.wire`` on
every start and every exec probe, and should not pay for httpx it never uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tool_selector_client.anthropic_search import (
        anthropic_deferred,
        anthropic_search_tool,
        anthropic_tool_result,
        anthropic_tool_result_async,
    )
    from tool_selector_client.breaker import CircuitBreaker
    from tool_selector_client.capture import CaptureWriter
    from tool_selector_client.client import AsyncSelectorClient, SelectorClient
    from tool_selector_client.core import FAIL_REASONS, Controls, FailReason, Selection
    from tool_selector_client.definitions import (
        SEARCH_TOOL_NAME,
        pick_definitions,
        search_tool_anthropic,
        search_tool_openai,
        search_tool_openai_responses,
    )
    from tool_selector_client.metrics import ClientMetrics, MissingDependencyError
    from tool_selector_client.openai_search import (
        openai_deferred,
        openai_tool_search_output,
        openai_tool_search_output_async,
        openai_tool_search_tool,
    )
    from tool_selector_client.providers import SearchAnswer
    from tool_selector_client.rollout import AsyncRollout, Decision, Mode, Rollout
    from tool_selector_client.wire import (
        Budget,
        Context,
        ErrorBody,
        Explanation,
        Filters,
        SearchRequest,
        SearchResponse,
        Tool,
    )

_HOMES = {
    "anthropic_search": [
        "anthropic_deferred",
        "anthropic_search_tool",
        "anthropic_tool_result",
        "anthropic_tool_result_async",
    ],
    "breaker": ["CircuitBreaker"],
    "capture": ["CaptureWriter"],
    "client": ["AsyncSelectorClient", "SelectorClient"],
    "core": ["FAIL_REASONS", "Controls", "FailReason", "Selection"],
    "definitions": [
        "SEARCH_TOOL_NAME",
        "pick_definitions",
        "search_tool_anthropic",
        "search_tool_openai",
        "search_tool_openai_responses",
    ],
    "metrics": ["ClientMetrics", "MissingDependencyError"],
    "openai_search": [
        "openai_deferred",
        "openai_tool_search_output",
        "openai_tool_search_output_async",
        "openai_tool_search_tool",
    ],
    "providers": ["SearchAnswer"],
    "rollout": ["AsyncRollout", "Decision", "Mode", "Rollout"],
    "wire": [
        "Budget",
        "Context",
        "ErrorBody",
        "Explanation",
        "Filters",
        "SearchRequest",
        "SearchResponse",
        "Tool",
    ],
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "FAIL_REASONS",
    "SEARCH_TOOL_NAME",
    "AsyncRollout",
    "AsyncSelectorClient",
    "Budget",
    "CaptureWriter",
    "CircuitBreaker",
    "ClientMetrics",
    "Context",
    "Controls",
    "Decision",
    "ErrorBody",
    "Explanation",
    "FailReason",
    "Filters",
    "MissingDependencyError",
    "Mode",
    "Rollout",
    "SearchAnswer",
    "SearchRequest",
    "SearchResponse",
    "Selection",
    "SelectorClient",
    "Tool",
    "anthropic_deferred",
    "anthropic_search_tool",
    "anthropic_tool_result",
    "anthropic_tool_result_async",
    "openai_deferred",
    "openai_tool_search_output",
    "openai_tool_search_output_async",
    "openai_tool_search_tool",
    "pick_definitions",
    "search_tool_anthropic",
    "search_tool_openai",
    "search_tool_openai_responses",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tool_selector_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tool_selector_client.{module}"), name)
    globals()[name] = value
    return value
