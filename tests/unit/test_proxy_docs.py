"""The README's release table and YAML say what the proxy's own log shows it does.

The log is ``../shared/fixtures/context-gateway/logs/tool_discovery.jsonl``: lines the
releases wrote while run against tool-selector (README there). Where a line shows what an
empty answer made the release do, the README's table must say it, and ``openapi.yaml`` the
same.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.support import ROOT
from tool_selector.http.openapi import build_openapi
from tool_selector.settings import Settings

LOG = ROOT.parent / "shared" / "fixtures" / "context-gateway" / "logs" / "tool_discovery.jsonl"

pytestmark = pytest.mark.skipif(not LOG.is_file(), reason=f"proxy log not found at {LOG}")


def log_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def release_rows() -> dict[str, str]:
    """The README's release table: release -> the "what an empty answer makes it do" cell."""
    section = (ROOT / "README.md").read_text().split("### Which Context Gateway release")[1]
    rows = [r for r in section.split("\n\n")[2].splitlines() if r.startswith("| v")]
    return {r.split("|")[1].strip(): r.rstrip(" |").rsplit("|", 1)[1].strip() for r in rows}


def yaml_blocks() -> dict[str, dict[str, Any]]:
    """The README's proxy YAML blocks by the releases their first comment names."""
    section = (ROOT / "README.md").read_text().split("### Which Context Gateway release")[1]
    section = section.split("### Long patterns")[0]
    blocks = re.findall(r"```yaml\n# (v[^:]+):.*?\n(.*?)```", section, flags=re.S)
    return {releases: yaml.safe_load(body) for releases, body in blocks}


def test_search_releases_log_an_empty_answer_as_a_fallback() -> None:
    """v0.4.0-v0.4.1 and v0.5.2 (``gateway_search_tools`` rows): "selected_names was empty"."""
    empty = [
        r
        for r in log_lines()
        if r.get("tool_name") == "gateway_search_tools"
        and r.get("compressed_content") == "selected_names was empty"
    ]
    assert empty
    assert {r["status"] for r in empty} == {"api_fallback_empty_selection"}
    rows = release_rows()
    for release in ("v0.4.0-v0.4.1", "v0.5.2"):
        assert "`api_fallback_empty_selection`" in rows[release]
        assert '"selected_names was empty"' in rows[release]
    assert "every deferred tool" in rows["v0.4.0-v0.4.1"]
    assert "regex search" in rows["v0.5.2"]


def test_v053_logs_an_empty_answer_and_falls_back_to_its_search() -> None:
    empty = [
        r
        for r in log_lines()
        if r.get("event_type") == "tool_search_result"
        and r.get("error_detail") == "relevant_tools was empty"
    ]
    assert empty
    assert {r["status"] for r in empty} == {"api_fallback_empty_selection"}
    row = release_rows()["v0.5.3 to today"]
    assert "`tool_search_result`" in row
    assert '"relevant_tools was empty"' in row
    assert "regex search" in row


def test_the_prefilter_forwards_every_tool_when_it_does_not_filter() -> None:
    """v0.4.2-v0.5.1 rows (``all_tools``, no search tool): ``passthrough`` forwards them all,
    never only ``always_keep``."""
    prefilter = [r for r in log_lines() if "all_tools" in r and "tool_name" not in r]
    passthrough = [r for r in prefilter if r["status"] == "passthrough"]
    assert passthrough
    assert all(r["selected_tools"] == r["all_tools"] for r in passthrough)
    row = release_rows()["v0.4.2-v0.5.1"]
    assert "forwards every tool" in row
    assert "`passthrough`" in row
    assert "always_keep" not in row


def test_openapi_says_what_the_readme_says() -> None:
    paths = build_openapi(Settings())["paths"]
    compress = json.dumps(paths["/api/compress/tool-discovery/"])
    search = json.dumps(paths["/v1/tool-discovery/search"])
    assert "v0.4.2-v0.5.1 (pre-filter) then forward every tool" in compress
    assert "only `always_keep`" not in compress
    assert "v0.5.3+ fall back to their own regex search" in compress
    assert "every deferred tool; v0.5.2 falls back to its own regex search" in search


@pytest.mark.parametrize(
    ("releases", "strategy", "block"),
    [
        ("v0.4.0-v0.4.1", "api", "api"),
        ("v0.4.2-v0.4.3", "api", "api"),
        ("v0.4.4-v0.5.1", "compresr", "compresr"),
        ("v0.5.2 and v0.5.3 to today", "tool-search", "compresr"),
    ],
)
def test_each_release_line_has_a_yaml_block_that_makes_it_call_us(
    releases: str, strategy: str, block: str
) -> None:
    """The strategy and the settings block each release's code reads (v0.5.2 calls only
    with "tool-search"; v0.4.4 reads a ``compresr:`` block, v0.4.2-v0.4.3 an ``api:`` one)."""
    config = yaml_blocks()[releases]
    discovery = config["pipes"]["tool_discovery"]
    assert discovery["enabled"] is True
    assert discovery["strategy"] == strategy
    assert discovery[block]["api_key"]
    endpoint = discovery[block].get("endpoint", "")
    if not endpoint.startswith("http"):
        assert config["urls"]["compresr"].startswith("http")
    if releases.startswith("v0.5.2"):
        assert not endpoint or endpoint.startswith("http"), "v0.5.2 posts a relative one as is"


def test_every_release_line_of_the_table_has_its_yaml() -> None:
    covered = " ".join(yaml_blocks())
    for release in release_rows():
        assert release.split("-")[0].split(" ")[0] in covered
