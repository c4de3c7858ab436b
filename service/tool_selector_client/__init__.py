"""Companion client and wire types for the tool-selector service.

Depends on msgspec and httpx only, so a proxy can install it without the server's
model and ranking dependencies. ``prometheus-client`` is optional (``ClientMetrics``).
"""

from tool_selector_client.breaker import CircuitBreaker
from tool_selector_client.capture import CaptureWriter
from tool_selector_client.client import AsyncSelectorClient, SelectorClient
from tool_selector_client.core import FAIL_REASONS, FailReason, Selection
from tool_selector_client.definitions import (
    SEARCH_TOOL_NAME,
    pick_definitions,
    search_tool_anthropic,
    search_tool_openai,
    search_tool_openai_responses,
)
from tool_selector_client.metrics import ClientMetrics, MissingDependencyError
from tool_selector_client.rollout import AsyncRollout, Decision, Mode, Rollout
from tool_selector_client.wire import (
    ErrorBody,
    Explanation,
    SearchRequest,
    SearchResponse,
    Tool,
)

__all__ = [
    "FAIL_REASONS",
    "SEARCH_TOOL_NAME",
    "AsyncRollout",
    "AsyncSelectorClient",
    "CaptureWriter",
    "CircuitBreaker",
    "ClientMetrics",
    "Decision",
    "ErrorBody",
    "Explanation",
    "FailReason",
    "MissingDependencyError",
    "Mode",
    "Rollout",
    "SearchRequest",
    "SearchResponse",
    "Selection",
    "SelectorClient",
    "Tool",
    "pick_definitions",
    "search_tool_anthropic",
    "search_tool_openai",
    "search_tool_openai_responses",
]
