"""Eval data sets: a catalog of tools and queries with the names of the tools that serve them.

A data set is a folder holding ``tools.jsonl`` and ``queries.jsonl`` (BFCL also has
``catalogs.jsonl``, each query's own small tool list), or the same two files given apart.

- A ``tools.jsonl`` line is a tool as a caller holds it: a raw provider object (OpenAI Chat
  ``{type, function: {...}}``, OpenAI Responses flat, Anthropic ``input_schema``, MCP
  ``inputSchema``, a Gemini ``functionDeclarations`` wrapper), sent as the proxy sends it
  (``Tool(name, description, definition=<the object>)``); or the bench's
  ``{"name", "description", "parameters"}`` row, wrapped as an OpenAI Chat definition.
- A ``queries.jsonl`` line is ``{"id", "query", "gold": [names]}`` plus a category
  (``category``, else ``subset``, else ``difficulty``). ``gold: []`` is a need no tool in the
  catalog serves: the right answer is to abstain. A gold name absent from the catalog, and a
  query id on a second line, are errors naming the file and line.

Known names: the six folders of the bench (``default_bench_dir``) and ``agent`` (this
repository's ``eval/agent``); anything else is read as a folder path.

Dev/test split: a query is ``dev`` when the first byte of ``sha256(id)`` is even, else
``test``. Tuning looks at dev only; reported numbers are test.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from tool_selector.errors import DatasetError
from tool_selector_client.definitions import expand, to_wire
from tool_selector_client.wire import Tool

__all__ = [
    "AGENT_DIR",
    "AGENT_SETS",
    "API_SETS",
    "DATASETS",
    "BenchQuery",
    "Dataset",
    "DatasetError",
    "Split",
    "as_tool",
    "default_bench_dir",
    "load_dataset",
    "load_files",
    "pick_queries",
    "split_of",
    "tools_of",
]

#: API-style sets (long user sentences); the synthetic negatives are drawn from these.
API_SETS = ("bfcl", "metatool", "sealtools")
#: Agent/MCP-style sets of the bench folder.
AGENT_SETS = ("arcade", "livemcpbench", "azure_mcp")
#: Every known name, in report order; ``agent`` lives in this repository.
DATASETS = (*API_SETS, *AGENT_SETS, "agent")
REPO_ROOT = Path(__file__).resolve().parents[4]
AGENT_DIR = REPO_ROOT / "eval" / "agent"
Split = Literal["dev", "test", "all"]
#: Names the bench folder (``default_bench_dir``); not a service setting (``NOT_SETTINGS``).
BENCH_DIR_ENV = "TOOL_SELECTOR_BENCH_DIR"
_CATEGORY_KEYS = ("category", "subset", "difficulty")
#: Keys that mark a provider object (sent raw), as opposed to a bench row (wrapped).
_PROVIDER_KEYS = frozenset(
    {"type", "function", "input_schema", "inputSchema", "parametersJsonSchema",
     "functionDeclarations", "function_declarations"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class BenchQuery:
    """One query with the names of the tools that serve it (none: a no-match query)."""

    id: str
    text: str
    gold: tuple[str, ...]
    catalog: tuple[str, ...] = ()
    category: str = ""


@dataclass(frozen=True, slots=True)
class Dataset:
    """A data set's whole catalog and its queries; ``source`` is where they were read."""

    name: str
    tools: tuple[Tool, ...]
    queries: tuple[BenchQuery, ...]
    source: Path

    def catalogs(self) -> Iterator[tuple[str, list[Tool]]]:
        """BFCL's per-query catalogs (``catalogs.jsonl``) as ``(query id, tools)``."""
        path = self.source / "catalogs.jsonl"
        if not path.exists():
            raise DatasetError(f"{self.name} has no per-query catalogs ({path})")
        for _, row in _read_jsonl(path):
            yield str(row["id"]), [as_tool(t) for t in row["tools"]]


def default_bench_dir() -> Path:
    """The bench folder: ``TOOL_SELECTOR_BENCH_DIR`` when set, else the nearest
    ``shared/bench`` beside the repository or one of its ancestor folders (a git worktree one
    level deeper finds the same one), else ``shared/bench`` beside the working directory."""
    if os.environ.get(BENCH_DIR_ENV):
        return Path(os.environ[BENCH_DIR_ENV])
    for folder in REPO_ROOT.parents:
        if (folder / "shared" / "bench").is_dir():
            return folder / "shared" / "bench"
    return Path.cwd().parent / "shared" / "bench"


def split_of(query_id: str) -> Literal["dev", "test"]:
    """``dev`` when sha256 of the id starts with an even byte, else ``test``."""
    return "dev" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "test"


def as_tool(row: Mapping[str, Any]) -> Tool:
    """A bench tool row as the wire ``Tool`` the proxy would send (OpenAI Chat definition)."""
    function: dict[str, Any] = {"name": row["name"], "description": row.get("description") or ""}
    if isinstance(row.get("parameters"), dict):
        function["parameters"] = row["parameters"]
    return Tool(
        name=row["name"],
        description=row.get("description") or None,
        definition={"type": "function", "function": function},
    )


def tools_of(row: Any) -> list[Tool]:
    """The wire ``Tool``s of one ``tools.jsonl`` line (a Gemini wrapper holds several).

    Provider objects are kept raw as the ``definition``; a bench row is wrapped
    (``as_tool``). Raises ``ValueError`` when a tool has no usable name.
    """
    if not isinstance(row, Mapping):
        raise ValueError("a tool line must be a JSON object")
    if _PROVIDER_KEYS.isdisjoint(row):
        if not isinstance(row.get("name"), str) or not row["name"].strip():
            raise ValueError("tool has no name")
        return [_with_search_text(as_tool(row), row)]
    tools = [to_wire(d) for d in expand([row])]
    if not tools or any(t is None for t in tools):
        raise ValueError("tool has no usable name (any provider shape: name or function.name)")
    return [_with_search_text(t, row) for t in tools if t is not None]


def _with_search_text(tool: Tool, row: Mapping[str, Any]) -> Tool:
    """``tool`` with the line's ``search_text`` key (search-only text, next to the
    description) on the wire field, kept out of ``definition``; unchanged without one."""
    text = row.get("search_text")
    if not isinstance(text, str) or not text.strip():
        return tool
    definition = None
    if tool.definition is not None:
        definition = {k: v for k, v in tool.definition.items() if k != "search_text"}
    return msgspec.structs.replace(tool, definition=definition, search_text=text)


def resolve(name: str, bench_dir: Path) -> tuple[str, Path]:
    """``(name, folder)`` of a known data set name or a folder path."""
    if name in DATASETS:
        return name, AGENT_DIR if name == "agent" else bench_dir / name
    folder = Path(name)
    if folder.is_dir():
        return folder.resolve().name, folder
    raise DatasetError(f"unknown dataset {name!r}: not a folder, nor one of {', '.join(DATASETS)}")


def load_dataset(bench_dir: Path, name: str) -> Dataset:
    """Read a data set by known name (see ``DATASETS``) or folder path."""
    label, folder = resolve(name, bench_dir)
    if not folder.is_dir():
        raise DatasetError(f"dataset folder not found: {folder} (set --bench-dir)")
    return load_files(folder / "tools.jsonl", folder / "queries.jsonl", label, folder)


def load_files(
    catalog: Path, queries: Path, name: str | None = None, source: Path | None = None
) -> Dataset:
    """Read a tools file and a queries file; every gold name must be in the catalog.

    ``name`` defaults to the queries file's stem (its folder's name when that is ``queries``).
    """
    tools = _read_tools(catalog)
    known = {t.name for t in tools}
    label = name or (queries.parent.resolve().name if queries.stem == "queries" else queries.stem)
    return Dataset(
        name=label,
        tools=tools,
        queries=_read_queries(queries, known, catalog),
        source=source or queries.parent,
    )


def pick_queries(
    queries: Sequence[BenchQuery], split: Split, limit: int | None
) -> list[BenchQuery]:
    """Queries of ``split``, at most ``limit`` of them, sampled deterministically by id hash.

    The sample is the ``limit`` queries with the smallest ``sha256("sample:" + id)``, so it
    does not depend on file order and a larger limit keeps every query of a smaller one.
    """
    chosen = [q for q in queries if split == "all" or split_of(q.id) == split]
    if limit is not None and limit < len(chosen):
        chosen.sort(key=lambda q: hashlib.sha256(f"sample:{q.id}".encode()).digest())
        chosen = chosen[:limit]
    return chosen


def check_split(datasets: Sequence[Dataset], split: Split) -> None:
    """``DatasetError`` naming the first data set with no query in ``split``: a run over it
    would measure nothing and report a table of none."""
    for data in datasets:
        if not pick_queries(data.queries, split, None):
            raise DatasetError(
                f"{data.name} ({data.source}): none of its {len(data.queries)} queries is in "
                f"the {split} split (--split all takes every one)"
            )


def _read_tools(path: Path) -> tuple[Tool, ...]:
    tools: list[Tool] = []
    for line, row in _read_jsonl(path):
        try:
            tools += tools_of(row)
        except ValueError as exc:
            raise DatasetError(f"{path}:{line}: {exc}") from exc
    if not tools:
        raise DatasetError(f"{path}: no tools")
    return tuple(tools)


def _read_queries(path: Path, known: set[str], catalog: Path) -> tuple[BenchQuery, ...]:
    out = []
    first: dict[str, int] = {}
    for line, row in _read_jsonl(path):
        query = _query(row, f"{path}:{line}")
        missing = [g for g in query.gold if g not in known]
        if missing:
            raise DatasetError(
                f"{path}:{line}: gold {', '.join(map(repr, missing))} not in the catalog {catalog}"
            )
        if query.id in first:
            raise DatasetError(
                f"{path}:{line}: query id {query.id!r} repeats line {first[query.id]} "
                "(an id is one query: counted once, in one split, one line of --answers)"
            )
        first[query.id] = line
        out.append(query)
    return tuple(out)


def _query(row: Any, where: str) -> BenchQuery:
    if not isinstance(row, Mapping):
        raise DatasetError(f"{where}: a query line must be a JSON object")
    gold = row.get("gold")
    if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
        raise DatasetError(f"{where}: 'gold' must be a list of tool names ([] for no match)")
    if not isinstance(row.get("query"), str) or not row["query"].strip() or "id" not in row:
        raise DatasetError(f"{where}: needs 'id' and a non-empty 'query'")
    category = next((str(row[k]) for k in _CATEGORY_KEYS if row.get(k)), "")
    return BenchQuery(
        id=str(row["id"]),
        text=row["query"],
        gold=tuple(gold),
        catalog=tuple(row.get("catalog") or ()),
        category=category,
    )


def _read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, decoded value)`` of each non-blank line."""
    try:
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield number, json.loads(line)
                    except (json.JSONDecodeError, RecursionError) as exc:
                        raise DatasetError(f"{path}:{number}: not JSON: {exc!s:.200}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
