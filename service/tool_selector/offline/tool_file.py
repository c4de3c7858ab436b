"""An operator's tool list file (``--catalog``): the proxy's tools as raw provider objects.

Accepted, as JSON or as JSONL (one entry per line):

- a list of tools, or an object with a ``tools`` list (a request body as the proxy sent it,
  an OpenAI / Anthropic request, or the proxy's ``session_tools.json``);
- each tool a raw provider object (OpenAI Chat / Responses, Anthropic, MCP, Gemini, as the
  service reads them), or a wrapper around one: our wire ``{name, description, definition}``,
  the proxy's pre-filter ``{name, description, parameters: <the raw object>}``, or a
  ``session_tools.json`` entry ``{tool_name, schema}``.

Repeated names keep their first definition (one proxy release sends every tool twice). A lone
surrogate escape is read as U+FFFD, as the service reads it (``pipeline.surrogates``).
``read_tool_list`` also says what was left out (``lint`` reports it): the entries with no
usable name (a Gemini wrapper's declarations each on its own, objects or not), each placed
so that a person finds it in the file, and the names given more than once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tool_selector.pipeline.surrogates import mend_surrogates
from tool_selector_client.definitions import declarations, tool_name


class ToolFileError(ValueError):
    """The tool list file cannot be read; the message names the file and the line."""


def _unwrap(entry: Any) -> Any:
    """The raw definition inside a wrapper; a wrapper's ``search_text`` (search-only text,
    next to ``description``) goes along as a top-level key, which readers take off again."""
    if not isinstance(entry, Mapping):
        return entry
    for key in ("definition", "schema", "parameters"):
        inner = entry.get(key)
        if isinstance(inner, Mapping) and tool_name(inner) is not None:
            extra = entry.get("search_text")
            return inner if extra is None else {**inner, "search_text": extra}
    if "tool_name" in entry and "name" not in entry:
        return {"name": entry["tool_name"], "description": entry.get("description", "")}
    if isinstance(entry.get("definition"), Mapping) and "name" in entry:
        return {"name": entry["name"], "description": entry.get("description") or ""}
    return entry


def _entries(text: str, path: Path) -> list[tuple[str, Any]]:
    """The file's tool entries, each with where it is: ``entry N`` of the list (1-based),
    ``line N`` of a JSONL file."""
    try:
        whole = json.loads(mend_surrogates(text.encode()))
    except RecursionError as exc:
        raise ToolFileError(f"{path}: nested too deep to read") from exc
    except ValueError:
        whole = None
        rows: list[tuple[str, Any]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((f"line {number}", json.loads(mend_surrogates(line.encode()))))
                except (ValueError, RecursionError) as exc:
                    raise ToolFileError(f"{path}:{number}: not JSON ({exc!s:.200})") from exc
        return rows
    if isinstance(whole, Mapping) and isinstance(whole.get("tools"), list):
        whole = whole["tools"]
    listed = whole if isinstance(whole, list) else [whole]
    return [(f"entry {n}", entry) for n, entry in enumerate(listed, 1)]


def _tool_entries(text: str, path: Path) -> Iterator[tuple[str, Any]]:
    """Each tool entry, unwrapped, with where it is; a Gemini wrapper's declarations one by
    one (``entry 1, declaration 4``), those that are not objects too."""
    for where, entry in _entries(text, path):
        inner = _unwrap(entry)
        decls = declarations(inner)
        if decls is None:
            yield where, inner
        else:
            yield from ((f"{where}, declaration {m}", d) for m, d in enumerate(decls, 1))


@dataclass(slots=True)
class ToolList:
    """A tool list file's tools (``tools``: the first definition of each name, in file
    order) and what was left out. ``unusable``: ``(where, name)`` of each tool entry that
    has no usable name (``where``: ``entry 2``, ``line 3`` of a JSONL file, ``entry 1,
    declaration 4`` in a Gemini wrapper), with the name as written (``None``: none, or not
    a string, or not an object). ``repeated``: each name
    given more than once, with how many times; ``differing``: those whose definitions are
    not all the same."""

    tools: list[Any] = field(default_factory=list)
    unusable: list[tuple[str, str | None]] = field(default_factory=list)
    repeated: dict[str, int] = field(default_factory=dict)
    differing: set[str] = field(default_factory=set)


def read_tool_list(path: Path) -> ToolList:
    """Every tool entry of ``path``, used or said why not (``ToolFileError``: no tool)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolFileError(f"{path}: cannot read ({exc})") from exc
    named: dict[str, Any] = {}
    found = ToolList()
    for where, entry in _tool_entries(text, path):
        name = tool_name(entry)
        if name is None:
            found.unusable.append((where, _written_name(entry)))
        elif name in named:
            found.repeated[name] = found.repeated.get(name, 1) + 1
            if entry != named[name]:
                found.differing.add(name)
        else:
            named[name] = entry
    if not named:
        raise ToolFileError(f"{path}: no tool with a name")
    found.tools = list(named.values())
    return found


def _written_name(entry: Any) -> str | None:
    """The name an entry holds as a string, where ``tool_name`` found none usable (blank,
    a control character); ``None`` when it holds no string name (the same places)."""
    if not isinstance(entry, Mapping):
        return None
    inner = entry.get("function")
    name = (inner if isinstance(inner, Mapping) else entry).get("name")
    return name if isinstance(name, str) else None


def load_tools(path: Path) -> list[Any]:
    """The distinct tools in ``path`` as raw definitions, in file order."""
    return read_tool_list(path).tools
