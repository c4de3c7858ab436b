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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tool_selector.pipeline.surrogates import mend_surrogates
from tool_selector_client.definitions import by_name, tool_name


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


def _entries(text: str, path: Path) -> list[Any]:
    try:
        whole = json.loads(mend_surrogates(text.encode()))
    except RecursionError as exc:
        raise ToolFileError(f"{path}: nested too deep to read") from exc
    except ValueError:
        whole = None
        rows: list[Any] = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(mend_surrogates(line.encode())))
                except (ValueError, RecursionError) as exc:
                    raise ToolFileError(f"{path}:{number}: not JSON ({exc!s:.200})") from exc
        return rows
    if isinstance(whole, Mapping) and isinstance(whole.get("tools"), list):
        return list(whole["tools"])
    if isinstance(whole, list):
        return whole
    return [whole]


def load_tools(path: Path) -> list[Any]:
    """The distinct tools in ``path`` as raw definitions, in file order."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolFileError(f"{path}: cannot read ({exc})") from exc
    tools = list(by_name(_unwrap(e) for e in _entries(text, path)).values())
    if not tools:
        raise ToolFileError(f"{path}: no tool with a name")
    return tools
