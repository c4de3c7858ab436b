"""The dependency arrows of STYLE.md and the rooms of the tree, enforced on the import graph.

``http/`` is the edge (Litestar, granian, anyio, Prometheus); ``pipeline/``, ``ranking/``,
``embeddings/`` (the Redis adapter aside) and ``lint/`` are framework-free; ``offline/`` holds
what does not serve. Nothing imports ``http/`` but the app factory's own room and the CLI.
"""

import ast
from pathlib import Path

import pytest

from tests.support import SERVICE_DIR

FRAMEWORK = ("litestar", "granian", "redis", "httpx", "prometheus_client", "anyio")
PACKAGE = SERVICE_DIR / "tool_selector"
#: Modules outside ``http/`` that may import it: the CLI serves and exports the OpenAPI file.
HTTP_IMPORTERS = {"offline/cli.py", "offline/security_cli.py"}
#: Declarations, not logic: the metric families, the settings table, the OpenAPI document.
DECLARATIONS = {"metrics.py", "settings.py", "http/openapi.py"}
MAX_FUNCTION_LINES = 40


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def modules(package: str) -> list[Path]:
    return sorted((SERVICE_DIR / package).rglob("*.py"))


def room(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


CORE = [
    p
    for p in modules("tool_selector/pipeline")
    + modules("tool_selector/ranking")
    + modules("tool_selector/embeddings")
    + modules("tool_selector/lint")
    if p.name != "redis_cache.py"
]


@pytest.mark.parametrize("path", CORE, ids=room)
def test_the_core_rooms_import_no_framework_and_nothing_of_the_edge(path: Path) -> None:
    edge = ("tool_selector.http", "tool_selector.metrics", "tool_selector.offline")
    bad = {m for m in imports_of(path) if m.split(".")[0] in FRAMEWORK or m.startswith(edge)}
    assert not bad


@pytest.mark.parametrize(
    "path", [p for p in modules("tool_selector") if not room(p).startswith("http/")], ids=room
)
def test_the_web_framework_lives_in_the_http_room_alone(path: Path) -> None:
    """Litestar and granian (the app and the server that starts it) are ``http/``'s; the
    command line asks ``http.server`` for the server's options and its start."""
    assert not {m for m in imports_of(path) if m.split(".")[0] in {"litestar", "granian"}}


@pytest.mark.parametrize(
    "path", [p for p in modules("tool_selector") if not room(p).startswith("http/")], ids=room
)
def test_only_the_cli_imports_the_http_room(path: Path) -> None:
    uses_http = any(m.startswith("tool_selector.http") for m in imports_of(path))
    assert not uses_http or room(path) in HTTP_IMPORTERS


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in modules("tool_selector") + modules("tool_selector_client")
        if p.relative_to(SERVICE_DIR).as_posix().split("/", 1)[1] not in DECLARATIONS
    ],
    ids=lambda p: p.relative_to(SERVICE_DIR).as_posix(),
)
def test_no_function_is_longer_than_forty_lines(path: Path) -> None:
    long = [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long


@pytest.mark.parametrize("path", modules("tool_selector/ranking"), ids=lambda p: p.name)
def test_ranking_core_imports_no_framework_or_io(path: Path) -> None:
    bad = {
        m
        for m in imports_of(path)
        if m.split(".")[0] in FRAMEWORK
        or (m.startswith("tool_selector.") and not m.startswith("tool_selector.ranking"))
    }
    assert not bad


@pytest.mark.parametrize("path", modules("tool_selector_client"), ids=lambda p: p.name)
def test_client_never_imports_the_server(path: Path) -> None:
    assert not {m for m in imports_of(path) if m.split(".")[0] == "tool_selector"}


def test_the_fusion_fit_is_offline_only() -> None:
    users = [
        p
        for p in modules("tool_selector")
        if "tool_selector.offline.evaluation.fit" in imports_of(p)
    ]
    assert sorted(p.name for p in users) == ["loso.py", "variants.py"]
    assert all(p.parent.name == "evaluation" for p in users)
