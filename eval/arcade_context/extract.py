"""Recover the earlier conversation turns of the Arcade bench's ``needs_context`` queries.

Usage (Python 3.11, standard library only)::

    python eval/arcade_context/extract.py ARCADE_TREE [--bench DIR] [--output FILE]

``ARCADE_TREE`` is an extract of ArcadeAI/arcade-ai at commit
27a6cd31a3fb381e5d6d071dc0497091ae6ec553 (the folder that holds ``toolkits/``), e.g.::

    git -C arcade-ai archive 27a6cd31a3fb381e5d6d071dc0497091ae6ec553 toolkits \\
        | tar -x -C /tmp/arcade-27a6cd3

Every eval file named by a ``needs_context`` query of ``BENCH/queries.jsonl`` is executed with
stub ``arcade_evals`` / ``arcade_tdk`` modules that record ``add_case`` / ``extend_case`` with
the library's semantics (``extend_case`` starts from the previous case's
``additional_messages`` and appends its own), and a stub for every ``arcade_<toolkit>`` import
that answers any attribute with an inert marker, so no toolkit code runs. The toolkit's own
``evals`` helper modules (shared conversations, critics) are real and run as written.

Each query is matched by (eval_file, suite, case) and, when a suite holds the same case name
twice, by its user message. One row per query goes to ``context.jsonl``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import random
import sys
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

SOURCE_COMMIT = "27a6cd31a3fb381e5d6d071dc0497091ae6ec553"
HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
MAX_CHARS = 2000
# Monolith toolkits whose tools the bench remapped to the split toolkits of the same tool name.
LEGACY_TOOLKITS = {"Google", "Search", "Microsoft", "Web", "CodeSandbox"}
# Names in the eval conversations of tools that no longer exist at the commit, and their heir.
ALIASES = {
    # arcade-ai #265 (ac0f5aa1) deprecated list_documents for search_documents.
    "Google_ListDocuments": "GoogleDocs_SearchDocuments",
    # Never a tool name at any commit: the eval's made-up "get the last N messages of the
    # channel named X" call, served by get_messages_in_channel_by_name.
    "Slack_GetConversationHistoryByName": "Slack_GetMessagesInChannelByName",
}


# --- stubs -------------------------------------------------------------------------------------


class Marker:
    """An inert stand-in for anything imported from a toolkit package."""

    def __init__(self, path: str) -> None:
        self._path = path

    def __getattr__(self, name: str) -> Marker:
        if name.startswith("__"):
            raise AttributeError(name)
        return Marker(f"{self._path}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Marker:
        return Marker(f"{self._path}()")

    def __repr__(self) -> str:
        return f"<{self._path}>"

    __str__ = __repr__


class Anything:
    """Accepts any constructor arguments and any method call (rubrics, critics, catalogs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._pos = args
        self._kw = kwargs
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


@dataclasses.dataclass
class Critic:
    """Base class the toolkits' own critics subclass (a dataclass, as in ``arcade_evals``)."""

    critic_field: str = ""
    weight: float = 1.0


class Case:
    """One recorded eval case.

    ``additional_messages`` is the conversation as this script reads it (see ``extend_case``);
    ``library_messages`` is what ``arcade_evals`` at the commit actually passes to the model.
    """

    def __init__(
        self,
        name: str,
        user_message: str,
        expected: list[tuple[str, Any]],
        additional_messages: list[Any],
        library_messages: list[Any],
    ) -> None:
        self.name = name
        self.user_message = user_message
        self.expected = expected
        self.additional_messages = additional_messages
        self.library_messages = library_messages


def expected_calls(calls: Any) -> list[tuple[str, Any]]:
    """(function name, args) of ``ExpectedToolCall(func=, args=)`` objects or (func, args)."""
    found: list[tuple[str, Any]] = []
    for call in calls or []:
        if isinstance(call, tuple):
            func, args = call[0], call[1] if len(call) > 1 else {}
        else:
            func = call._kw.get("func", call._pos[0] if call._pos else None)
            args = call._kw.get("args", call._pos[1] if len(call._pos) > 1 else {})
        found.append((str(getattr(func, "_path", func)).rsplit(".", 1)[-1], args))
    return found


def replayed_turns(case: Case) -> list[dict[str, Any]]:
    """The previous case's own turn: its user message and its expected call (no result)."""
    calls = [
        {
            "id": f"expected_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, default=str)},
        }
        for i, (name, args) in enumerate(case.expected)
    ]
    return [
        {"role": "user", "content": case.user_message, "replayed": True},
        {"role": "assistant", "content": "", "tool_calls": calls, "replayed": True},
    ]


class EvalSuite:
    """Records cases the way ``arcade_evals.EvalSuite`` builds them."""

    def __init__(self, name: str = "", *args: Any, **kwargs: Any) -> None:
        self.name = name
        self.cases: list[Case] = []

    def add_case(
        self,
        name: str,
        user_message: str,
        expected_tool_calls: Any = None,
        *args: Any,
        additional_messages: list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        messages = list(additional_messages or [])
        expected = expected_calls(expected_tool_calls)
        self.cases.append(Case(name, user_message, expected, messages, list(messages)))

    def extend_case(
        self,
        name: str,
        user_message: str,
        *args: Any,
        expected_tool_calls: Any = None,
        additional_messages: list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Continue the previous case's conversation.

        ``arcade_evals`` at the commit keeps only the previous case's ``additional_messages``
        (its docstring says "the previous case's messages and user message"); the bench's
        ``n_context_messages`` counts the previous case's own turn too. This script follows
        the bench: previous messages, the previous user message and an assistant turn calling
        the previous expected tools, then this call's ``additional_messages``.
        """
        if not self.cases:
            raise ValueError(f"extend_case {name!r} with no case to extend")
        last = self.cases[-1]
        own = list(additional_messages or [])
        expected = expected_calls(expected_tool_calls) or last.expected
        messages = [*last.additional_messages, *replayed_turns(last), *own]
        self.cases.append(
            Case(name, user_message, expected, messages, [*last.library_messages, *own])
        )

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


SUITE_FUNCTIONS: list[Callable[[], Any]] = []


def tool_eval(*args: Any, **kwargs: Any) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def register(function: Callable[[], Any]) -> Callable[[], Any]:
        SUITE_FUNCTIONS.append(function)
        return function

    return register


def _stub_module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []
    module.__dict__.update(attrs)
    return module


def _evals_module(name: str) -> types.ModuleType:
    attrs: dict[str, Any] = {
        "EvalSuite": EvalSuite,
        "tool_eval": tool_eval,
        "Critic": Critic,
        "ExpectedToolCall": Anything,
        "EvalRubric": Anything,
    }
    for critic in (
        "BinaryCritic",
        "SimilarityCritic",
        "NumericCritic",
        "DatetimeCritic",
        "NoneCritic",
    ):
        attrs[critic] = type(critic, (Anything,), {})
    module = _stub_module(name, **attrs)
    module.__getattr__ = lambda attr: type(attr, (Anything,), {})  # type: ignore[attr-defined]
    return module


class ToolkitModule(types.ModuleType):
    """``arcade_<toolkit>`` and its submodules: every attribute is a marker."""

    def __getattr__(self, name: str) -> Marker:
        if name.startswith("__"):
            raise AttributeError(name)
        return Marker(f"{self.__name__}.{name}")


class ToolkitStubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers every ``arcade_*`` import (other than the two stubbed libraries) with a stub."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.startswith("arcade_"):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = ToolkitModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install_stubs() -> None:
    sys.modules["arcade_evals"] = _evals_module("arcade_evals")
    sys.modules["arcade_evals.critic"] = _evals_module("arcade_evals.critic")
    sys.modules["arcade_tdk"] = _stub_module("arcade_tdk", ToolCatalog=Anything)
    sys.meta_path.insert(0, ToolkitStubs())


# --- running eval files ------------------------------------------------------------------------


def run_eval_file(tree: Path, eval_file: str) -> dict[tuple[str, str], list[Case]]:
    """Execute one eval file; cases by (suite name, case name), in file order."""
    path = tree / eval_file
    toolkit_dir = tree.joinpath(*Path(eval_file).parts[:2])
    for name in [m for m in sys.modules if m == "evals" or m.startswith("evals.")]:
        del sys.modules[name]
    sys.path.insert(0, str(toolkit_dir))
    importlib.invalidate_caches()
    SUITE_FUNCTIONS.clear()
    # Some evals make up ids with uuid4(); seed them per file so the output is reproducible.
    rng = random.Random(eval_file)  # noqa: S311
    real_uuid4 = uuid.uuid4
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    try:
        namespace: dict[str, Any] = {"__name__": f"arcade_eval_{path.stem}", "__file__": str(path)}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102
        cases: dict[tuple[str, str], list[Case]] = {}
        for function in list(SUITE_FUNCTIONS):
            suite = function()
            for case in suite.cases:
                cases.setdefault((suite.name, case.name), []).append(case)
        return cases
    finally:
        uuid.uuid4 = real_uuid4
        sys.path.remove(str(toolkit_dir))


# --- turning messages into the context field ---------------------------------------------------


def text_of(content: Any) -> str:
    """A message's content as plain text (string, list of parts, or a JSON value)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if p)
    return json.dumps(content, ensure_ascii=False)


def truncate(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def called_names(message: dict[str, Any]) -> Iterator[str]:
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        if function.get("name"):
            yield str(function["name"])
    if isinstance(message.get("function_call"), dict) and message["function_call"].get("name"):
        yield str(message["function_call"]["name"])


class NameMapper:
    """Maps an Arcade tool name (``Slack_SendMessage``, ``Google.ListEmails``) to the bench's."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.names = {str(t["name"]) for t in tools}
        self.by_tool: dict[str, list[str]] = {}
        for tool in tools:
            toolkit = str(tool["toolkit"])
            self.by_tool.setdefault(str(tool["name"])[len(toolkit) + 1 :], []).append(
                str(tool["name"])
            )

    def __call__(self, raw: str, query_toolkit: str) -> str | None:
        raw = ALIASES.get(raw.replace(".", "_", 1), raw)
        if raw == raw.lower():  # a bare function name: send_message
            toolkit, tool = "", "".join(part.capitalize() for part in raw.split("_"))
        else:
            toolkit, _, tool = raw.replace(".", "_", 1).partition("_")
        if f"{toolkit}_{tool}" in self.names:
            return f"{toolkit}_{tool}"
        candidates = self.by_tool.get(tool, [])
        own = [c for c in candidates if c.startswith(f"{query_toolkit}_")]
        if len(own) == 1:
            return own[0]
        if toolkit in LEGACY_TOOLKITS or not toolkit:
            family = [c for c in candidates if c.startswith(toolkit)]
            if len(family) == 1:
                return family[0]
        return None


def context_row(
    query: dict[str, Any], case: Case, mapper: NameMapper
) -> tuple[dict[str, Any], list[str]]:
    """The output row for one query, and the raw tool names that could not be mapped."""
    messages: list[str] = []
    roles: list[str] = []
    raw_calls: list[str] = []
    called: list[str] = []
    unmapped: list[str] = []
    for message in case.additional_messages:
        role = str(message.get("role", ""))
        if role in {"user", "assistant", "tool", "function"}:
            text = text_of(message.get("content")).strip()
            if text:
                messages.append(truncate(text))
                roles.append("tool" if role == "function" else role)
        if role == "assistant":
            for raw in called_names(message):
                raw_calls.append(raw)
                name = mapper(raw, str(query["toolkit"]))
                if name is None:
                    unmapped.append(raw)
                else:
                    called.append(name)
    recent = list(reversed(dict.fromkeys(reversed(called))))
    row = {
        "id": query["id"],
        "messages": messages,
        "roles": roles,
        "recent_tools": recent,
        "tool_calls": called,
        "tool_calls_raw": raw_calls,
        "n_raw_messages": len(case.additional_messages),
        "n_context_messages": query["n_context_messages"],
        "count_matches": len(case.additional_messages) == query["n_context_messages"],
        "n_library_messages": len(case.library_messages),
        "replayed_turns": sum(bool(m.get("replayed")) for m in case.additional_messages),
        "eval_file": query["eval_file"],
        "suite": query["suite"],
        "case": query["case"],
    }
    return row, unmapped


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def default_bench() -> Path:
    """The bench's ``arcade`` folder, found as ``tool-selector eval`` finds the bench
    (``TOOL_SELECTOR_BENCH_DIR``, else a ``shared/bench`` above the repository)."""
    if os.environ.get("TOOL_SELECTOR_BENCH_DIR"):
        return Path(os.environ["TOOL_SELECTOR_BENCH_DIR"]) / "arcade"
    for folder in REPO_ROOT.parents:
        if (folder / "shared" / "bench" / "arcade").is_dir():
            return folder / "shared" / "bench" / "arcade"
    return Path.cwd().parent / "shared" / "bench" / "arcade"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path, help=f"extract of arcade-ai at {SOURCE_COMMIT[:10]}")
    parser.add_argument("--bench", type=Path, default=None, help="folder of queries/tools.jsonl")
    parser.add_argument("--output", "-o", type=Path, default=HERE / "context.jsonl")
    args = parser.parse_args(argv)
    bench = args.bench or default_bench()
    queries = [q for q in read_jsonl(bench / "queries.jsonl") if q["category"] == "needs_context"]
    mapper = NameMapper(read_jsonl(bench / "tools.jsonl"))
    install_stubs()

    by_file: dict[str, dict[tuple[str, str], list[Case]]] = {}
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for query in queries:
        eval_file = str(query["eval_file"])
        if eval_file not in by_file:
            by_file[eval_file] = run_eval_file(args.tree, eval_file)
        found = by_file[eval_file].get((query["suite"], query["case"]), [])
        if len(found) > 1:
            found = [c for c in found if c.user_message.strip() == query["query"].strip()]
        if not found:  # fall back to the user message anywhere in the file
            found = [
                c
                for cases in by_file[eval_file].values()
                for c in cases
                if c.user_message.strip() == query["query"].strip()
            ]
        if len(found) != 1:
            problems.append(f"{query['id']}: {len(found)} matching cases")
            continue
        row, unmapped = context_row(query, found[0], mapper)
        if unmapped:
            problems.append(f"{query['id']}: unmapped tool names {unmapped}")
        if not row["messages"]:
            problems.append(f"{query['id']}: no message text")
        rows.append(row)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    matched = sum(r["count_matches"] for r in rows)
    print(f"{len(rows)}/{len(queries)} needs_context queries recovered -> {args.output}")  # noqa: T201
    print(f"raw message count equals n_context_messages: {matched}/{len(rows)}")  # noqa: T201
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)  # noqa: T201
    return 0 if len(rows) == len(queries) and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
