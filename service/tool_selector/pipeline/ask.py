"""What the pipeline ranks: an ``Ask`` (the pattern, the limits) over a ``ToolSource``.

A ``ToolSource`` is a request's tools as the decoder left them: either already decoded, or
raw bytes named by ``key`` that are decoded (and their limits checked) only when the catalog
store has no catalog under that key. A resent tool list, byte for byte the same, is then
never decoded again: its catalog holds everything ranking needs. The name is worked out
when the store first asks for it (``named``; the decoder's hashes the raw bytes once and
keeps the name), so the selector can start a new pattern's encode first and name the list
while it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tool_selector.ranking.request_parts import PatternKind
from tool_selector_client.wire import Budget, Context, Filters, SearchRequest, Tool


@dataclass(frozen=True, slots=True)
class ToolSource:
    """A request's tools, decoded by ``load`` only when asked.

    ``key`` (what ``named`` gives, asked each time it is read: a ``named`` that hashes
    keeps its answer, as the decoder's does) names the list in the catalog store when
    the caller has a name for it (the hash of its raw bytes, or a fingerprint); ``None``
    makes the store fingerprint the decoded tools.
    """

    named: Callable[[], str | None]
    load: Callable[[], list[Tool]]

    @property
    def key(self) -> str | None:
        return self.named()

    @classmethod
    def keyed(cls, key: str | None, load: Callable[[], list[Tool]]) -> ToolSource:
        """Tools ``load`` gives, named ``key`` already."""
        return cls(lambda: key, load)

    @classmethod
    def of(cls, tools: list[Tool], key: str | None = None) -> ToolSource:
        """Tools already decoded."""
        return cls.keyed(key, lambda: tools)


@dataclass(frozen=True, slots=True)
class Ask:
    """One search, contract-free. ``pattern_chars``: the pattern's length as sent (longer
    than ``pattern`` when the decoder cut it).

    The caller's controls (``pipeline.controls``), each ``None`` when not sent, which then
    changes nothing: ``filters`` apply before ranking, ``budget`` and ``min_score`` after it,
    ``context`` joins the pattern's evidence.
    """

    pattern: str
    tools: ToolSource
    #: Whose learned evidence the search reads (``X-Tool-Selector-Scope``, else the caller's
    #: token); ``None``: none (the answer is the one without evidence).
    scope: str | None = None
    top_k: int = 5
    always_keep: tuple[str, ...] = ()
    explain: bool = False
    pattern_chars: int = 0
    filters: Filters | None = None
    budget: Budget | None = None
    min_score: float | None = None
    context: Context | None = None
    #: Which reading of a long pattern was ranked (``request_parts.PatternKind``); ``None``
    #: when the pattern is ranked as sent.
    pattern_kind: PatternKind | None = None

    @classmethod
    def of(cls, request: SearchRequest, key: str | None = None) -> Ask:
        """A decoded ``SearchRequest`` as an ``Ask`` (evaluation and tests rank these)."""
        return cls(
            pattern=request.pattern,
            tools=ToolSource.of(request.tools, key),
            top_k=request.top_k,
            always_keep=tuple(request.always_keep),
            explain=request.explain,
            pattern_chars=len(request.pattern),
            filters=request.filters,
            budget=request.budget,
            min_score=request.min_score,
            context=request.context,
        )

    @property
    def pattern_cut(self) -> bool:
        """Whether the decoder cut the pattern to its budget."""
        return self.pattern_chars > len(self.pattern)
