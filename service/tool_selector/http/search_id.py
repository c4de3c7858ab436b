"""Every answer's id: ``X-Tool-Selector-Search-Id``, also in the search's log line.

An operator joins a search to the tool the model later called (the proxy's own log names the
tools it re-injected; the id names our answer). The id is made once per HTTP request, on
first use, and kept in the request's ASGI scope: the handler writes it into the log line and
a before-send hook (``stamp``) puts it on the answer's headers, so every answer carries it,
whoever sends it: a handler, the error edge, the guard's refusals, the framework's 404.
"""

from __future__ import annotations

import uuid
from typing import Any, cast

from litestar.types import Message, Scope

from tool_selector_client.wire import SEARCH_ID_HEADER

_RAW_HEADER = SEARCH_ID_HEADER.lower().encode()
_KEY = "tool_selector.search_id"


def search_id(scope: Scope) -> str:
    """The id of the request of ``scope`` (32 hex digits, random), made on first use."""
    state: dict[str, Any] = scope.setdefault("state", {})
    found = state.get(_KEY)
    if found is None:
        found = state[_KEY] = uuid.uuid4().hex
    return cast("str", found)


async def stamp(message: Message, scope: Scope) -> None:
    """Before-send hook: the request's id on the start of every HTTP answer."""
    if message["type"] != "http.response.start":
        return
    headers = list(message.get("headers") or ())
    headers.append((_RAW_HEADER, search_id(scope).encode()))
    message["headers"] = headers
