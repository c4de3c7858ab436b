"""Which tools a caller's ``Filters`` permit, tool by tool: the one rule the service applies
before ranking and the client applies when it fails open (a policy that an outage could
bypass would be no policy).

Facts read from a tool (``facts``):

- size: bytes of its definition as compact JSON (the caller's raw provider object
  re-encoded without whitespace; a tool without one counts ``{"name", "description"}``);
- read-only / may be destructive: MCP ``annotations`` (on the definition, or on the
  ``function`` object an OpenAI-shaped definition wraps). Per the MCP specification
  ``readOnlyHint`` defaults to false and ``destructiveHint`` to true, and the latter means
  something only when the tool is not read-only: an unannotated tool is not read-only and
  may be destructive, so ``read_only`` and ``exclude_destructive`` both leave it out;
- unsafe: ``"safe": false`` on the tool object (pickTools' mark) or at the top of its
  definition.

Name globs (``fnmatch``: ``*``, ``?``, ``[...]``) match case-insensitively, on the full name
and on the bare name of a namespaced one (``create_*`` matches ``mcp__github__create_issue``
and ``github.create_issue``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from tool_selector_client.wire import Filters, Tool

__all__ = [
    "FILTER_KINDS",
    "ToolFacts",
    "facts",
    "failed_filter",
    "glob_matcher",
    "name_matches",
    "split_namespace",
]

#: The order a tool removed by several filters is counted in (``Removed``'s fields).
FILTER_KINDS = ("allow", "deny", "unsafe", "read_only", "destructive")
_ENCODE = msgspec.json.Encoder()
_NAMESPACE_SPLIT = re.compile(r"__|[./:]")


def split_namespace(name: str) -> tuple[str, str]:
    """``mcp__github__create_issue`` -> (``mcp github``, ``create_issue``); plain: no namespace."""
    parts = [p for p in _NAMESPACE_SPLIT.split(name) if p]
    if len(parts) <= 1:
        return "", name
    return " ".join(parts[:-1]), parts[-1]


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What the filters and the budget read of one tool (see the module)."""

    size: int
    read_only: bool
    destructive: bool
    unsafe: bool


def facts(tool: Tool, *, sized: bool = True) -> ToolFacts:
    """The policy facts of one tool; its size 0 unless ``sized`` (the filters never read it:
    the budget does, and a definition holding what JSON cannot encode has none)."""
    definition = tool.definition
    hints = {} if definition is None else _annotations(definition)
    size = 0
    if sized:
        shown = {"name": tool.name, "description": tool.description or ""}
        size = len(_ENCODE.encode(shown if definition is None else definition))
    read_only = hints.get("readOnlyHint") is True
    destructive = not read_only and hints.get("destructiveHint") is not False
    unsafe = tool.safe is False or (definition is not None and definition.get("safe") is False)
    return ToolFacts(size, read_only, destructive, unsafe)


def _annotations(definition: dict[str, Any]) -> dict[str, Any]:
    for holder in (definition, definition.get("function")):
        if isinstance(holder, dict):
            found = holder.get("annotations")
            if isinstance(found, dict):
                return found
    return {}


def glob_matcher(globs: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive regex matching any of ``globs``; ``None`` for no globs. Made
    once per list of globs (``failed_filter`` asks for each tool)."""
    return _matcher(tuple(globs)) if globs else None


@functools.lru_cache(maxsize=64)
def _matcher(globs: tuple[str, ...]) -> re.Pattern[str]:
    translated = (fnmatch.translate(_normalized(g)) for g in globs)
    return re.compile("|".join(translated), re.IGNORECASE | re.DOTALL)


def _normalized(glob: str) -> str:
    """``glob`` with each run of ``*`` and ``?`` written ``?``...``*`` (it matches the same
    names: a star matches any run, so the ``?`` can come first). fnmatch's regex retries a
    star's ``?`` after it from every place in the name: 256 globs of a star and 120 ``?``
    cost 7.8 ms a name. Bracket classes are left as they are."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        end = _class_end(glob, i) if glob[i] == "[" else i + 1
        if glob[i] in "*?":
            while end < len(glob) and glob[end] in "*?":
                end += 1
            run = glob[i:end]
            out.append("?" * run.count("?") + ("*" if "*" in run else ""))
        else:
            out.append(glob[i:end])
        i = end
    return "".join(out)


def _class_end(glob: str, at: int) -> int:
    """Where the bracket class opening at ``at`` ends, as ``fnmatch.translate`` reads it
    (``[!``, a first ``]`` inside); ``at + 1`` for a ``[`` that closes nothing (a literal)."""
    j = at + 1
    if j < len(glob) and glob[j] == "!":
        j += 1
    if j < len(glob) and glob[j] == "]":
        j += 1
    while j < len(glob) and glob[j] != "]":
        j += 1
    return at + 1 if j >= len(glob) else j + 1


def name_matches(matcher: re.Pattern[str] | None, name: str, bare: str | None = None) -> bool:
    """Whether ``name``, full or bare (``split_namespace``'s, unless given), matches."""
    if matcher is None:
        return False
    bare = split_namespace(name)[1] if bare is None else bare
    return bool(matcher.match(name) or (bare != name and matcher.match(bare)))


def failed_filter(filters: Filters, name: str, tool: ToolFacts) -> str | None:
    """The first filter (``FILTER_KINDS``) that leaves the tool out, or ``None``."""
    if filters.allow is not None and not name_matches(glob_matcher(filters.allow), name):
        return "allow"
    if name_matches(glob_matcher(filters.deny), name):
        return "deny"
    if tool.unsafe and not filters.allow_unsafe:
        return "unsafe"
    if filters.read_only and not tool.read_only:
        return "read_only"
    if filters.exclude_destructive and tool.destructive:
        return "destructive"
    return None
