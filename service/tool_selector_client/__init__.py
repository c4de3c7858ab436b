"""Companion client and wire types for the tool-selector service.

Depends on msgspec and httpx only, so a proxy can install it without the server's
model and ranking dependencies.
"""

from tool_selector_client.wire import (
    ErrorBody,
    Explanation,
    SearchRequest,
    SearchResponse,
    Tool,
)

__all__ = ["ErrorBody", "Explanation", "SearchRequest", "SearchResponse", "Tool"]
