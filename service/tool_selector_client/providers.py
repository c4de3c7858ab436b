"""What the provider hooks share: one search over a request's deferred tools, failing open.

``search`` / ``asearch`` ask the service through the companion client (its timeouts,
breaker and fail-open reasons) and turn the ``Selection`` into the names to load:

- the service's picks when its answer is meaningful;
- an honest empty answer when the caller set ``min_score`` and nothing reached it;
- otherwise a local answer, as the client's fail-open does: the proxy's keyword
  ``relevance`` pick over the deferred tools the filters permit, and every one of them when
  that pick finds nothing. ``SearchAnswer.reason`` says why, ``fallback`` says which.

Every answer is counted on ``ClientMetrics`` (when given) under mode ``enforce``, as the
rollout counts a decision whose tools are used. Provider objects may be plain dicts or the
SDKs' own models: fields are read with ``field_of``, never through an SDK import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tool_selector_client.client import AsyncSelectorClient, SelectorClient
from tool_selector_client.core import Controls, FailReason, Selection, clamp_top_k
from tool_selector_client.definitions import by_name, described
from tool_selector_client.metrics import ClientMetrics
from tool_selector_client.relevance import relevance_select
from tool_selector_client.wire import Budget, Context, Filters

__all__ = [
    "QUERY_SCHEMA",
    "Ask",
    "Found",
    "Options",
    "SearchAnswer",
    "asearch",
    "context_of",
    "field_of",
    "query_of",
    "search",
]

#: The search tool's one argument, the same for every provider.
QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What the tool must do, in a few words (or a tool's name).",
        }
    },
    "required": ["query"],
}
#: Conversation sent as ``context``: the last messages, each cut, and the tools called lately.
CONTEXT_MESSAGES = 16
CONTEXT_MESSAGE_CHARS = 4000
CONTEXT_TOOLS = 16
_NO_CALL = frozenset({"disabled", "empty_pattern", "circuit_open"})
Fallback = Literal["keyword", "all"]


@dataclass(frozen=True, slots=True)
class Options:
    """The caller's settings for one search, passed through to the service request."""

    top_k: int | None = None
    always_keep: tuple[str, ...] = ()
    filters: Filters | None = None
    budget: Budget | None = None
    min_score: float | None = None
    context: Context | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """One search: the model's query, the deferred tools, the caller's options, and the
    conversation's ``context`` (the caller's own, when given, wins)."""

    query: str
    tools: list[Any]
    options: Options = Options()
    context: Context | None = None

    @property
    def controls(self) -> Controls:
        """The client's ``Controls`` for this search."""
        o = self.options
        context = o.context if o.context is not None else self.context
        return Controls(filters=o.filters, budget=o.budget, min_score=o.min_score, context=context)


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """What to hand the provider, and how it was found.

    ``output`` is the provider's block or item (Anthropic ``tool_result``, OpenAI
    ``tool_search_output``); ``names`` the tools it loads, best first. ``reason`` is the
    client's fail-open reason (``None`` when the service answered); ``fallback`` says which
    local answer was used then (``keyword`` pick or ``all`` permitted deferred tools).
    """

    output: dict[str, Any]
    names: tuple[str, ...]
    selection: Selection
    fallback: Fallback | None = None

    @property
    def reason(self) -> FailReason | None:
        """The client's fail-open reason, or ``None``."""
        return self.selection.reason


def field_of(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for a mapping, ``obj.key`` for an SDK model; ``default`` when absent."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def query_of(arguments: Any) -> str:
    """The search text in a tool call's arguments: ``query`` (a JSON string is parsed
    first), or the names in ``paths`` (OpenAI's built-in client schema); ``""`` otherwise."""
    if isinstance(arguments, str | bytes):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments if isinstance(arguments, str) else ""
    query = field_of(arguments, "query")
    if isinstance(query, str):
        return query
    paths = field_of(arguments, "paths")
    if isinstance(paths, list):
        return " ".join(p for p in paths if isinstance(p, str))
    return ""


def context_of(texts: Iterable[str], tools: Iterable[str]) -> Context | None:
    """The wire ``Context`` for a conversation's texts and called tools (``None`` if empty)."""
    messages = [t[:CONTEXT_MESSAGE_CHARS] for t in texts if t.strip()][-CONTEXT_MESSAGES:]
    recent = [t for t in tools if t][-CONTEXT_TOOLS:]
    if not messages and not recent:
        return None
    return Context(messages=messages, recent_tools=recent)


@dataclass(frozen=True, slots=True)
class Found:
    """The names to load, the client's selection, and the local answer used, if any."""

    names: tuple[str, ...]
    selection: Selection
    fallback: Fallback | None = None


def search(client: SelectorClient, ask: Ask, metrics: ClientMetrics | None = None) -> Found:
    """The names to load for ``ask`` (blocking); never raises."""
    o = ask.options
    selection = client.select(ask.query, ask.tools, o.top_k, o.always_keep, ask.controls)
    return _found(selection, ask, client.max_search_results, metrics)


async def asearch(
    client: AsyncSelectorClient, ask: Ask, metrics: ClientMetrics | None = None
) -> Found:
    """The names to load for ``ask`` (async); never raises."""
    o = ask.options
    selection = await client.select(ask.query, ask.tools, o.top_k, o.always_keep, ask.controls)
    return _found(selection, ask, client.max_search_results, metrics)


def _found(
    selection: Selection, ask: Ask, max_results: int, metrics: ClientMetrics | None
) -> Found:
    if selection.ok:
        found = Found(selection.names, selection)
    else:
        found = _local(selection, ask, clamp_top_k(ask.options.top_k, max_results))
    _count(metrics, found)
    return found


def _local(selection: Selection, ask: Ask, limit: int) -> Found:
    """The fail-open answer: a keyword pick over the permitted tools, else all of them."""
    permitted = selection.tools
    picked = relevance_select(ask.query, described(permitted), limit)
    if picked:
        return Found(tuple(picked), selection, "keyword")
    return Found(tuple(by_name(permitted)), selection, "all")


def _count(metrics: ClientMetrics | None, found: Found) -> None:
    if metrics is None:
        return
    outcome = found.selection.outcome
    metrics.outcomes.labels("enforce", outcome).inc()
    metrics.reinjected.labels("enforce").observe(len(found.names))
    if outcome not in _NO_CALL:
        metrics.latency.labels(outcome).observe(found.selection.latency_s)
