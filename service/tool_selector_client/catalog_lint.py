"""The catalog report's wire types: ``POST /v1/catalog/lint`` (``LINT_PATH``).

``LintRequest`` names a catalog the service has seen by its key (``catalog``, as the search
log line reports it) or sends its tools (``tools``, the search contract's ``Tool`` objects);
the answer is a ``LintReport`` (JSON) or its text rendering (``?format=text``). Each
``Finding`` has a ``kind``, the ``tools`` it is about, what was found (``detail``) and what
to do about it (``fix``); docs/catalog-lint.md says what each kind means.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import Struct

from tool_selector_client.wire import Tool

__all__ = [
    "LINT_PATH",
    "Finding",
    "FindingKind",
    "LintReport",
    "LintRequest",
    "Misled",
    "ProbeRecall",
    "ToolUse",
]

#: The catalog report's path.
LINT_PATH = "/v1/catalog/lint"

#: Every kind of finding, in the order the report lists them (what keeps a tool from being
#: found first).
FindingKind = Literal[
    "invalid_name",
    "unusable_entry",
    "unreachable",
    "name_only",
    "duplicate_name",
    "collision",
    "siblings",
    "no_description",
    "description_repeats_name",
    "undescribed_parameters",
    "description_too_long",
    "too_many_tools",
    "never_called",
    "after_retry",
]


class LintRequest(Struct, frozen=True):
    """A catalog to report on: exactly one of ``catalog`` (a key the service holds) or
    ``tools``; the other absent or ``null``."""

    catalog: str | None = None
    tools: list[Tool] | None = None


class Misled(Struct, frozen=True, omit_defaults=True):
    """A probe of ``tool`` (``source``: where its text came from) that the service answers
    with ``answered``, a sibling, before it; ``rank``: ``tool``'s place in that answer (1 is
    first; absent: not in it)."""

    tool: str
    source: str
    probe: str
    answered: str
    rank: int | None = None


class Finding(Struct, frozen=True, omit_defaults=True):
    """One thing an operator can fix in a catalog.

    ``displaced_by``: the tools answered in its place (``unreachable``). ``apart``: per tool,
    the words only it has among its group (``siblings``, ``unreachable``; empty: none).
    ``dense`` / ``bm25``: the group's least pairwise similarity (``siblings``). ``misled``:
    the probes of a group's tools answered with a sibling before them (``siblings``), most
    costly first.
    """

    kind: FindingKind
    tools: list[str]
    detail: str
    fix: str
    displaced_by: list[str] = msgspec.field(default_factory=list)
    apart: dict[str, list[str]] = msgspec.field(default_factory=dict)
    dense: float | None = None
    bm25: float | None = None
    misled: list[Misled] = msgspec.field(default_factory=list)


class ProbeRecall(Struct, frozen=True):
    """How many of a catalog's own probe queries found their tool in the top ``top_k``."""

    probes: int
    found: int
    tools: int
    tools_reached: int


class ToolUse(Struct, frozen=True):
    """One tool's use in the report's scope (learned feedback): the answers that showed it,
    the times the model called it, and how many of those came after a second search."""

    name: str
    shown: int
    called: int
    after_retry: int


class LintReport(Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The report on one catalog: its key, size, which ranker answered the probes, the
    probes' recall and the findings, most urgent kind first; ``usage``: each tool's use in
    the request's scope, when its feedback saw any (``X-Tool-Selector-Scope``)."""

    catalog: str
    tools: int
    ranking: str
    top_k: int
    recall: ProbeRecall
    findings: list[Finding]
    seconds: float = 0.0
    usage: list[ToolUse] | None = None
