"""Committed artefacts that must not drift from the code."""

from pathlib import Path

import yaml

from tests.support import ROOT
from tool_selector.http.openapi import build_openapi, openapi_yaml
from tool_selector.settings import Settings


def test_committed_openapi_matches_the_code() -> None:
    committed = (ROOT / "openapi.yaml").read_text()
    assert committed == openapi_yaml(Settings()), "run: tool-selector export-openapi"


def test_openapi_documents_the_search_contract() -> None:
    doc = build_openapi(Settings())
    post = doc["paths"]["/v1/tool-discovery/search"]["post"]
    assert {"200", "400", "413", "415"} <= set(post["responses"])
    request = doc["components"]["schemas"]["SearchRequest"]
    assert request["required"] == ["pattern", "tools"]
    assert request["properties"]["top_k"]["maximum"] == Settings().max_top_k


def test_openapi_yaml_parses() -> None:
    assert yaml.safe_load((ROOT / "openapi.yaml").read_text())["openapi"] == "3.1.0"


def test_the_operations_page_documents_every_setting() -> None:
    page = (ROOT / "docs" / "operations.md").read_text()
    missing = [
        f"TOOL_SELECTOR_{n.upper()}"
        for n in Settings.__dataclass_fields__
        if f"TOOL_SELECTOR_{n.upper()}" not in page
    ]
    assert not missing, f"docs/operations.md lacks: {missing}"


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in Path(ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()


def test_the_readme_is_a_landing_page() -> None:
    """Issue V: 300 lines or fewer; the detail lives in docs/."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


def test_the_readme_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if f"(docs/{p})" not in readme] == []
