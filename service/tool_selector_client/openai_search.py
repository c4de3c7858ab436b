"""OpenAI Responses: the client-executed ``tool_search`` and its ``tool_search_output``.

The request carries ``{"type": "tool_search", "execution": "client", ...}``
(``openai_tool_search_tool``) beside functions marked ``"defer_loading": true``, flat or as
members of a ``namespace``. The model answers with a ``tool_search_call`` output item; the
client sends back a ``tool_search_output`` input item with the same ``call_id`` whose
``tools`` are the loaded definitions as the request wrote them: a deferred function as is, a
namespace member inside its namespace (one namespace entry per namespace, holding only the
members found). A member is ranked under ``namespace.function``, the name the service reads
as a namespaced tool. Shapes match the ``openai`` SDK's ``ToolSearchToolParam`` and
``ResponseToolSearchOutputItemParamParam`` (the tests validate them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from tool_selector_client import providers
from tool_selector_client.core import listed
from tool_selector_client.definitions import tool_name
from tool_selector_client.metrics import ClientMetrics
from tool_selector_client.wire import Budget, Context, Filters

__all__ = [
    "OPENAI_SEARCH_DESCRIPTION",
    "openai_context",
    "openai_deferred",
    "openai_tool_search_output",
    "openai_tool_search_output_async",
    "openai_tool_search_tool",
]

OPENAI_SEARCH_DESCRIPTION = (
    "Search the deferred tools by what you need to do and load the ones that fit. Call it "
    "whenever the tool you need is not loaded yet."
)
_LOADABLE = frozenset({"function", "custom"})


def openai_tool_search_tool(description: str = OPENAI_SEARCH_DESCRIPTION) -> dict[str, Any]:
    """The ``tool_search`` tool, executed by the client, taking a ``query``."""
    return {
        "type": "tool_search",
        "execution": "client",
        "description": description,
        "parameters": dict(providers.QUERY_SCHEMA),
    }


@dataclass(frozen=True, slots=True)
class Deferred:
    """One deferred tool: its definition as the request wrote it, and its namespace if any."""

    definition: Mapping[str, Any]
    namespace: Mapping[str, Any] | None = None


def _loadable(tool: Any) -> str | None:
    """The name of a deferred function/custom tool, else ``None``."""
    if not isinstance(tool, Mapping) or tool.get("type") not in _LOADABLE:
        return None
    return tool_name(tool) if tool.get("defer_loading") is True else None


def openai_deferred(tools: Iterable[Any]) -> dict[str, Deferred]:
    """The request's deferred tools by ranked name (``fn`` or ``namespace.fn``), in order;
    a repeated name keeps its first definition."""
    found: dict[str, Deferred] = {}
    for tool in tools:
        name = _loadable(tool)
        if name is not None:
            found.setdefault(name, Deferred(tool))
            continue
        if not isinstance(tool, Mapping) or tool.get("type") != "namespace":
            continue
        space, members = tool.get("name"), tool.get("tools")
        if not isinstance(space, str) or not space or not isinstance(members, list):
            continue
        for member in members:
            name = _loadable(member)
            if name is not None:
                found.setdefault(f"{space}.{name}", Deferred(member, tool))
    return found


def _ranked(name: str, deferred: Deferred) -> dict[str, Any]:
    """What the service ranks: the definition under its ranked name."""
    if deferred.namespace is None:
        return dict(deferred.definition)
    return {**deferred.definition, "name": name}


def _loaded(names: Sequence[str], deferred: Mapping[str, Deferred]) -> list[dict[str, Any]]:
    """The loaded tools as the request defined them, namespaces regrouped, in rank order."""
    out: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for name in names:
        entry = deferred[name]
        if entry.namespace is None:
            out.append(dict(entry.definition))
            continue
        space = str(entry.namespace["name"])
        if space not in spaces:
            spaces[space] = {**entry.namespace, "tools": []}
            out.append(spaces[space])
        spaces[space]["tools"].append(dict(entry.definition))
    return out


def openai_context(items: Any, search_tool: str = "tool_search") -> Context | None:
    """The conversation (a Responses ``input``) as the service's ``context``: message
    texts, oldest first, and the functions called."""
    if isinstance(items, str):
        return providers.context_of([items], [])
    texts: list[str] = []
    called: list[str] = []
    for item in listed(items):
        kind = providers.field_of(item, "type")
        if kind == "function_call" and providers.field_of(item, "name") != search_tool:
            called.append(_called(item))
        elif kind in (None, "message"):
            texts.extend(_texts(providers.field_of(item, "content")))
    return providers.context_of(texts, called)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    parts = (providers.field_of(p, "text") for p in listed(content) if not isinstance(content, str))
    return [p for p in parts if isinstance(p, str)]


def _search(
    call: Any,
    tools: Iterable[Any],
    *,
    conversation: Any = None,
    top_k: int | None = None,
    always_keep: Iterable[str] = (),
    filters: Filters | None = None,
    budget: Budget | None = None,
    min_score: float | None = None,
    context: Context | None = None,
    metrics: ClientMetrics | None = None,
) -> providers.DeferredSearch:
    """The ``tool_search_output`` answering a ``tool_search_call``; never raises.

    ``tools`` is the request's ``tools`` (only deferred functions and namespace members are
    searched); ``conversation`` the request's ``input`` (sent as ``context`` unless
    ``context`` is given). With ``min_score`` and nothing reaching it, ``tools`` is empty.
    """
    options = providers.Options(
        top_k, tuple(listed(always_keep)), filters, budget, min_score, context, metrics
    )
    deferred = openai_deferred(listed(tools))
    sent = providers.sent_context(options, conversation, openai_context)
    ranked = [_ranked(name, d) for name, d in deferred.items()]
    query = providers.query_of(providers.field_of(call, "arguments"))
    output = partial(_output, call, deferred)
    key = str(providers.field_of(call, "call_id") or "")
    earlier = _earlier(key, conversation)
    return providers.DeferredSearch(query, ranked, options, sent, output, key, earlier)


#: How a ``tool_search_call`` reads among a conversation's calls (no function has this name).
_SEARCH = "\x00tool_search"


def _earlier(key: str, conversation: Any) -> dict[str, tuple[str, ...]]:
    """What the model called after each earlier ``tool_search_call`` of the conversation
    (``providers.Calls``); nothing when there is none or it cannot be read."""
    if conversation is None or isinstance(conversation, str):
        return {}
    try:
        steps, turn = [], 0
        for item in listed(conversation):
            kind = providers.field_of(item, "type")
            call_id = str(providers.field_of(item, "call_id") or "")
            if kind == "tool_search_call":
                steps.append((call_id, _SEARCH, turn))
            elif kind == "function_call":
                steps.append((call_id, _called(item), turn))
            else:  # an output, a message: the calls after it are a later turn's
                turn += 1
    except Exception:  # the caller's odd conversation loses only the feedback
        return {}
    return providers.calls_after_searches(steps, _SEARCH, key)


def _called(item: Any) -> str:
    """A ``function_call``'s tool as ranked: ``namespace.fn`` for a namespace's member."""
    name = str(providers.field_of(item, "name") or "")
    space = providers.field_of(item, "namespace")
    return f"{space}.{name}" if isinstance(space, str) and space and name else name


def _output(call: Any, deferred: Mapping[str, Deferred], names: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "tool_search_output",
        "call_id": providers.field_of(call, "call_id"),
        "execution": "client",
        "status": "completed",
        "tools": _loaded([n for n in names if n in deferred], deferred),
    }


openai_tool_search_output, openai_tool_search_output_async = providers.hooks(
    _search, "openai_tool_search_output"
)
