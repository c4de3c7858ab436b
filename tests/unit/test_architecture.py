"""The dependency arrows of STYLE.md, enforced on the import graph."""

import ast
from pathlib import Path

import pytest

from tests.support import SERVICE_DIR

FRAMEWORK = ("litestar", "granian", "redis", "httpx", "prometheus_client", "anyio")


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
    assert not users
