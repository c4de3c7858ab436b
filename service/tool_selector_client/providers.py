"""What the provider hooks share: one search over a request's deferred tools, failing open.

A provider module reads the model's search call into a ``DeferredSearch`` (pure), and
``hooks`` turns that one reading into the provider's blocking and async hook: each adds only
the one I/O, the client's ``select``, and ``answer`` (pure again) turns the ``Selection`` into
the names to load:

- the service's picks when its answer is meaningful;
- an honest empty answer when the caller set ``min_score`` and nothing reached it;
- otherwise a local answer, as the client's fail-open does: the proxy's keyword
  ``relevance`` pick over the deferred tools the filters permit, and every one of them when
  that pick finds nothing. ``SearchAnswer.reason`` says why, ``fallback`` says which.

Feedback without a call: the hooks remember each search's answer on the client (its search
id and names, by the provider's search call id) and, reading a later search call of the same
conversation, report which of an earlier search's tools the model called after it
(``Calls``: the provider module reads them from the conversation it is already given).

Every answer is counted on ``ClientMetrics`` (when given) under mode ``enforce``, as the
rollout counts a decision whose tools are used. Provider objects may be plain dicts or the
SDKs' own models: fields are read with ``field_of``, never through an SDK import.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, Protocol, TypeVar

import anyio

from tool_selector_client.client import AsyncSelectorClient, SelectorClient
from tool_selector_client.core import Controls, FailReason, Selection, clamp_top_k
from tool_selector_client.definitions import by_name, described
from tool_selector_client.metrics import ClientMetrics
from tool_selector_client.relevance import relevance_select
from tool_selector_client.wire import Budget, Context, Filters

__all__ = [
    "QUERY_SCHEMA",
    "AsyncHook",
    "BlockingHook",
    "Calls",
    "DeferredSearch",
    "Options",
    "SearchAnswer",
    "answer",
    "calls_after_searches",
    "context_of",
    "field_of",
    "hooks",
    "query_of",
    "sent_context",
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
Fallback = Literal["keyword", "all"]
#: Per earlier search call of the conversation (the provider's call id), the tools the model
#: called after it, before its next search.
Calls = Mapping[str, tuple[str, ...]]
P = ParamSpec("P")
HookT = TypeVar("HookT", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Options:
    """The caller's keywords for one search: sent with the service request, except
    ``metrics``, where its answer is counted."""

    top_k: int | None = None
    always_keep: tuple[str, ...] = ()
    filters: Filters | None = None
    budget: Budget | None = None
    min_score: float | None = None
    context: Context | None = None
    metrics: ClientMetrics | None = None


@dataclass(frozen=True, slots=True)
class DeferredSearch:
    """The model's search as the service is asked it: the query, the deferred tools as the
    service ranks them, the caller's options, the ``context`` to send (``sent_context``), and
    how the provider's answer is written from the names to load; ``key``: the provider's id
    of this search call, and ``earlier``: what the model called after each earlier search of
    the conversation (``Calls``)."""

    query: str
    tools: list[Any]
    options: Options
    context: Context | None
    output: Callable[[tuple[str, ...]], dict[str, Any]]
    key: str = ""
    earlier: Calls = field(default_factory=dict)

    @property
    def request(self) -> tuple[str, list[Any], int | None, tuple[str, ...], Controls]:
        """The client's ``select`` arguments for this search."""
        o, context = self.options, self.context
        controls = Controls(
            filters=o.filters, budget=o.budget, min_score=o.min_score, context=context
        )
        return self.query, self.tools, o.top_k, o.always_keep, controls


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


class BlockingHook(Protocol[P]):
    """A provider's blocking hook: the client, then the arguments of the provider's reading."""

    def __call__(
        self, client: SelectorClient, *args: P.args, **kwargs: P.kwargs
    ) -> SearchAnswer: ...


class AsyncHook(Protocol[P]):
    """A provider's async hook: the client, then the arguments of the provider's reading."""

    async def __call__(
        self, client: AsyncSelectorClient, *args: P.args, **kwargs: P.kwargs
    ) -> SearchAnswer: ...


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
        except (ValueError, RecursionError):  # the model wrote them: never a raise
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


def sent_context(
    options: Options, conversation: Any, read: Callable[[Any], Context | None]
) -> Context | None:
    """The ``context`` to send: the caller's own when given, else ``read(conversation)``
    (``None`` without one). A conversation that cannot be read loses only the context."""
    if options.context is not None or conversation is None:
        return options.context
    try:
        return read(conversation)
    except Exception:  # the caller's odd conversation must not break the search
        return None


def answer(search: DeferredSearch, selection: Selection, max_results: int) -> SearchAnswer:
    """The provider's answer to ``search`` given the client's ``selection``, counted."""
    names, fallback = selection.names, None
    if not selection.ok:
        names, fallback = _local(search, selection, clamp_top_k(search.options.top_k, max_results))
    if search.options.metrics is not None:
        search.options.metrics.count("enforce", len(names), selection)
    return SearchAnswer(search.output(names), names, selection, fallback)


def _local(
    search: DeferredSearch, selection: Selection, limit: int
) -> tuple[tuple[str, ...], Fallback]:
    """The fail-open answer: a keyword pick over the permitted tools, else all of them."""
    permitted = selection.tools
    picked = relevance_select(search.query, described(permitted), limit)
    if picked:
        return tuple(picked), "keyword"
    return tuple(by_name(permitted)), "all"


def hooks(read: Callable[P, DeferredSearch], name: str) -> tuple[BlockingHook[P], AsyncHook[P]]:
    """A provider's hooks ``name`` and ``name_async`` from its one ``read`` of the model's
    search: each takes the client, then ``read``'s arguments, and adds only the one I/O,
    the client's ``select``, so the blocking and async answers cannot drift apart. ``name``
    is documented by ``read``'s docstring."""

    def blocking(client: SelectorClient, *args: P.args, **kwargs: P.kwargs) -> SearchAnswer:
        search = read(*args, **kwargs)
        client.report_calls(search.earlier)
        selection = client.select(*search.request)
        client.note_search(search.key, selection)
        return answer(search, selection, client.max_search_results)

    async def awaiting(
        client: AsyncSelectorClient, *args: P.args, **kwargs: P.kwargs
    ) -> SearchAnswer:
        search = read(*args, **kwargs)
        async with anyio.create_task_group() as group:  # the feedback beside the search
            group.start_soon(client.report_calls, search.earlier)
            selection = await client.select(*search.request)
        client.note_search(search.key, selection)
        return answer(search, selection, client.max_search_results)

    return (
        _public(blocking, read, name, "SelectorClient", read.__doc__),
        _public(awaiting, read, f"{name}_async", "AsyncSelectorClient", f"Async ``{name}``."),
    )


def calls_after_searches(
    steps: Iterable[tuple[str, str, int]], search_tool: str, current: str
) -> dict[str, tuple[str, ...]]:
    """``Calls`` from a conversation's tool calls in order, each ``(call id, tool name,
    turn)``, calls of one turn made together (parallel calls, before any of their results):
    the searches of a turn before ``current``'s are due, each with the other tools called in
    the turns after it, up to and with the next turn that searches again. Calls of a
    search's own turn are not after it, and neither are ``current``'s turn's other searches
    due: their calls are still to come."""
    out: dict[str, tuple[str, ...]] = {}
    pending: list[str] = []
    window: list[str] = []
    for _, searches, calls in _turns(steps, search_tool):
        window.extend(calls)  # made after the pending searches' results
        if not searches:
            continue
        out.update((s, tuple(dict.fromkeys(window))) for s in pending)
        if current in searches:
            return out
        pending, window = searches, []
    out.update((s, tuple(dict.fromkeys(window))) for s in pending)
    return out


def _turns(
    steps: Iterable[tuple[str, str, int]], search_tool: str
) -> list[tuple[int, list[str], list[str]]]:
    """The steps by turn, in order: each turn's search call ids and other tools' names."""
    turns: list[tuple[int, list[str], list[str]]] = []
    for call_id, name, turn in steps:
        if not turns or turns[-1][0] != turn:
            turns.append((turn, [], []))
        if name == search_tool:
            turns[-1][1].append(call_id)
        elif name:
            turns[-1][2].append(name)
    return turns


def _public(
    hook: HookT, read: Callable[..., Any], name: str, client: str, doc: str | None
) -> HookT:
    """``hook`` as the public function ``name`` of ``read``'s module: ``help`` and
    ``inspect`` show ``read``'s signature with ``client`` first."""
    shown = inspect.signature(read)
    first = inspect.Parameter("client", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=client)
    parameters = [first, *shown.parameters.values()]
    vars(hook)["__signature__"] = shown.replace(
        parameters=parameters, return_annotation="SearchAnswer"
    )
    hook.__name__ = hook.__qualname__ = name
    hook.__module__, hook.__doc__ = read.__module__, doc
    return hook
