"""The caller's controls over one catalog: which tools may be answered (filters), and how
many fit the answer (budget). Pure: arrays and tuples in, arrays and tuples out.

Filters run before ranking (``allowed``): a removed tool takes no place in the order, the
exact-name rule or ``always_keep``. The budget runs after it (``fit_budget``): tools are
taken best first while they fit; one that does not fit is skipped, never a reason to drop a
better one that does.

Policy facts per tool (``Traits``) are read once, when the catalog is built:

- ``size``: bytes of the tool's definition as compact JSON (the caller's raw provider
  object re-encoded without whitespace; a tool sent without one counts its name and
  description as ``{"name": ..., "description": ...}``): what re-injecting it costs.
- ``read_only`` / ``destructive``: MCP ``annotations`` (on the definition, or on the
  ``function`` object an OpenAI-shaped definition wraps). Per the MCP specification
  ``readOnlyHint`` defaults to false and ``destructiveHint`` to true, and the latter means
  something only when the tool is not read-only: an unannotated tool is not read-only and
  may be destructive, so ``read_only`` and ``exclude_destructive`` both leave it out.
- ``unsafe``: ``"safe": false`` on the tool object (pickTools' mark) or at the top of its
  definition.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from tool_selector_client.wire import Filters, Tool

BoolArray = npt.NDArray[np.bool_]
_ENCODE = msgspec.json.Encoder()
#: The order a tool removed by several filters is counted in (``Removed``'s fields).
FILTER_KINDS = ("allow", "deny", "unsafe", "read_only", "destructive")


@dataclass(frozen=True, slots=True)
class Traits:
    """Per-tool policy facts of one catalog (arrays in catalog order); see the module."""

    size: npt.NDArray[np.int64]
    read_only: BoolArray
    destructive: BoolArray
    unsafe: BoolArray

    @classmethod
    def of(cls, tools: Sequence[Tool]) -> Traits:
        facts = [_facts(t) for t in tools]
        return cls(
            size=np.array([f[0] for f in facts], dtype=np.int64),
            read_only=np.array([f[1] for f in facts], dtype=bool),
            destructive=np.array([f[2] for f in facts], dtype=bool),
            unsafe=np.array([f[3] for f in facts], dtype=bool),
        )


def _facts(tool: Tool) -> tuple[int, bool, bool, bool]:
    """(size, read-only, may be destructive, unsafe) of one tool."""
    definition = tool.definition
    if definition is None:
        size = len(_ENCODE.encode({"name": tool.name, "description": tool.description or ""}))
        hints: dict[str, Any] = {}
    else:
        size = len(_ENCODE.encode(definition))
        hints = _annotations(definition)
    read_only = hints.get("readOnlyHint") is True
    destructive = not read_only and hints.get("destructiveHint") is not False
    unsafe = tool.safe is False or (definition is not None and definition.get("safe") is False)
    return size, read_only, destructive, unsafe


def _annotations(definition: dict[str, Any]) -> dict[str, Any]:
    """The MCP annotations of a definition, wherever its provider shape keeps them."""
    for holder in (definition, definition.get("function")):
        if isinstance(holder, dict):
            found = holder.get("annotations")
            if isinstance(found, dict):
                return found
    return {}


def glob_matcher(globs: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive regex matching any of ``globs`` (``fnmatch`` syntax)."""
    if not globs:
        return None
    return re.compile("|".join(fnmatch.translate(g) for g in globs), re.IGNORECASE | re.DOTALL)


def name_matches(matcher: re.Pattern[str], name: str, bare: str) -> bool:
    """Whether the tool's full or bare name matches."""
    return bool(matcher.match(name) or (bare != name and matcher.match(bare)))


def allowed(
    names: Sequence[tuple[str, str]], traits: Traits, filters: Filters
) -> tuple[BoolArray, dict[str, int]]:
    """Which tools ``filters`` leave in (``names``: each tool's full and bare name), and
    how many each filter removed, a tool counted under the first one it fails
    (``FILTER_KINDS``)."""
    n = len(names)
    checks: list[BoolArray] = []
    allow = glob_matcher(filters.allow or ())
    deny = glob_matcher(filters.deny)
    ones = np.ones(n, dtype=bool)
    checks.append(
        ones
        if filters.allow is None
        else np.array([allow is not None and name_matches(allow, *p) for p in names], bool)
    )
    checks.append(ones if deny is None else np.array([not name_matches(deny, *p) for p in names]))
    checks.append(ones if filters.allow_unsafe else ~traits.unsafe)
    checks.append(traits.read_only if filters.read_only else ones)
    checks.append(~traits.destructive if filters.exclude_destructive else ones)
    keep = np.ones(n, dtype=bool)
    removed: dict[str, int] = {}
    for kind, passes in zip(FILTER_KINDS, checks, strict=True):
        out = keep & ~passes.astype(bool)
        removed[kind] = int(out.sum())
        keep &= ~out
    return keep, removed


def fit_budget(
    candidates: Sequence[int], size: npt.NDArray[np.int64], count: int, max_bytes: int | None
) -> tuple[list[int], int]:
    """``candidates`` (best first) taken while fewer than ``count`` are taken, skipping each
    one whose size would take the total over ``max_bytes``; and how many were skipped for
    bytes before the count was full. A tool larger than the whole budget is never taken."""
    taken: list[int] = []
    total, skipped = 0, 0
    for i in candidates:
        if len(taken) >= count:
            break
        cost = int(size[i])
        if max_bytes is not None and total + cost > max_bytes:
            skipped += 1
            continue
        taken.append(i)
        total += cost
    return taken, skipped
