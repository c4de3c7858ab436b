"""Benchmark datasets of ``../shared/bench``: tools as wire ``Tool``s, queries with gold names.

Each folder holds ``tools.jsonl`` (``{"name", "description", "parameters"}``) and
``queries.jsonl`` (``{"id", "query", "gold": [...]}``); BFCL also has ``catalogs.jsonl``
with each query's own small tool list. Tools are wrapped as OpenAI Chat definitions, the
shape the proxy sends.

Dev/test split: a query is ``dev`` when the first byte of ``sha256(id)`` is even, else
``test``. Tuning looks at dev only; reported numbers are test.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tool_selector_client.wire import Tool

DATASETS = ("bfcl", "metatool", "sealtools")
Split = Literal["dev", "test", "all"]


class DatasetError(Exception):
    """The bench directory or a dataset file is missing or malformed."""


@dataclass(frozen=True, slots=True)
class BenchQuery:
    """One query with the names of the tools that serve it."""

    id: str
    text: str
    gold: tuple[str, ...]
    catalog: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Dataset:
    """A dataset's whole catalog and its queries."""

    name: str
    tools: tuple[Tool, ...]
    queries: tuple[BenchQuery, ...]
    bench_dir: Path

    def catalogs(self) -> Iterator[tuple[str, list[Tool]]]:
        """BFCL's per-query catalogs (``catalogs.jsonl``) as ``(query id, tools)``."""
        path = self.bench_dir / self.name / "catalogs.jsonl"
        if not path.exists():
            raise DatasetError(f"{self.name} has no per-query catalogs ({path})")
        for row in _read_jsonl(path):
            yield str(row["id"]), [as_tool(t) for t in row["tools"]]


def default_bench_dir() -> Path:
    """``../shared/bench`` next to the repository root, else next to the working directory."""
    beside_repo = Path(__file__).resolve().parents[3].parent / "shared" / "bench"
    return beside_repo if beside_repo.is_dir() else Path.cwd().parent / "shared" / "bench"


def split_of(query_id: str) -> Literal["dev", "test"]:
    """``dev`` when sha256 of the id starts with an even byte, else ``test``."""
    return "dev" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "test"


def as_tool(row: dict[str, Any]) -> Tool:
    """A bench tool row as the wire ``Tool`` the proxy would send (OpenAI Chat definition)."""
    function: dict[str, Any] = {"name": row["name"], "description": row.get("description") or ""}
    if isinstance(row.get("parameters"), dict):
        function["parameters"] = row["parameters"]
    return Tool(
        name=row["name"],
        description=row.get("description") or None,
        definition={"type": "function", "function": function},
    )


def load_dataset(bench_dir: Path, name: str) -> Dataset:
    """Read one dataset folder of the bench directory."""
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    folder = bench_dir / name
    if not folder.is_dir():
        raise DatasetError(f"dataset folder not found: {folder} (set --bench-dir)")
    tools = tuple(as_tool(row) for row in _read_jsonl(folder / "tools.jsonl"))
    queries = tuple(
        BenchQuery(
            id=str(r["id"]),
            text=str(r["query"]),
            gold=tuple(r["gold"]),
            catalog=tuple(r.get("catalog") or ()),
        )
        for r in _read_jsonl(folder / "queries.jsonl")
    )
    return Dataset(name=name, tools=tools, queries=queries, bench_dir=bench_dir)


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


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
