"""docs/context-gateway.md's release table and YAML say what the proxy's own log shows it does.

The log is ``tests/fixtures/context-gateway/tool_discovery.jsonl``: lines the
releases wrote while run against tool-selector (``PROXY.md`` there). Where a line shows what an
empty answer made the release do, that page's table must say it, and ``openapi.yaml`` the
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

PAGE = ROOT / "docs" / "context-gateway.md"
#: The heading after the release tables and YAML blocks on that page.
NEXT_SECTION = "## A report from your proxy's own log"
LOG = ROOT / "tests" / "fixtures" / "context-gateway" / "tool_discovery.jsonl"


def log_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def release_rows() -> dict[str, str]:
    """The page's release table: release -> the "what an empty answer makes it do" cell."""
    section = PAGE.read_text().split("### Which Context Gateway release")[1]
    rows = [r for r in section.split("\n\n")[2].splitlines() if r.startswith("| v")]
    return {r.split("|")[1].strip(): r.rstrip(" |").rsplit("|", 1)[1].strip() for r in rows}


def yaml_blocks() -> dict[str, dict[str, Any]]:
    """The page's proxy YAML blocks by the releases their first comment names."""
    section = PAGE.read_text().split("### Which Context Gateway release")[1]
    section = section.split(NEXT_SECTION)[0]
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


# What else ``urls.compresr`` feeds, per release line, read from Context Gateway's code at
# each tag (internal/pipes/tool_discovery/tool_discovery.go, internal/pipes/tool_output/
# types.go, internal/config/providers.go, internal/gateway/handler.go and
# handler_nonstreaming.go). The page's table and YAML blocks must say the same.

FIXTURE_README = LOG.parent / "PROXY.md"
US = "tool-selector:8080"
TOOL_OUTPUT = "/api/compress/tool-output/"
HISTORY = "/api/compress/history/"

#: (YAML block, "what else" row, the key of the block that carries the tool-discovery URL
#: when the release posts to it as written (None: the pre-filter's client always posts to
#: ``urls.compresr`` + a fixed path), the settings that would follow ``urls.compresr`` with
#: the strategies that do, what the row must name)
LINES: list[tuple[str, str, tuple[str, ...] | None, dict[tuple[str, ...], set[str]], list[str]]]
LINES = [
    (
        "v0.4.0-v0.4.1",
        "v0.4.0-v0.4.1",
        ("pipes", "tool_discovery", "api", "endpoint"),
        {},
        ["`urls.compresr` + `pipes.tool_output.api.endpoint`", '`strategy: "api"`'],
    ),
    (
        "v0.4.2-v0.4.3",
        "v0.4.2-v0.4.3",
        None,
        {("pipes", "tool_output"): {"api"}},
        [f"`POST {TOOL_OUTPUT}`", '`strategy: "api"`', "uncompressed"],
    ),
    (
        "v0.4.4-v0.5.1",
        "v0.4.4-v0.5.1",
        None,
        {("pipes", "tool_output"): {"api", "compresr"}, ("preemptive", "summarizer"): {"compresr"}},
        [
            f"`POST {TOOL_OUTPUT}`",
            f"`POST {HISTORY}`",
            '`preemptive.summarizer.strategy: "compresr"`',
            "`COMPRESR_BASE_URL`",
            "uncompressed",
            "compaction request to the model unchanged",
        ],
    ),
    (
        "v0.5.2 and v0.5.3 to today",
        "v0.5.2",
        ("pipes", "tool_discovery", "compresr", "endpoint"),
        {},
        ["history compression", "`internal/gateway/handler_nonstreaming.go`"],
    ),
    (
        "v0.5.2 and v0.5.3 to today",
        "v0.5.3 to today",
        ("pipes", "tool_discovery", "compresr", "endpoint"),
        {},
        ["`pipes.tool_discovery.schema_compression.enabled`", "never read", "`COMPRESR_BASE_URL`"],
    ),
]


def page_section() -> str:
    text = PAGE.read_text()
    return text.split("### Which Context Gateway release")[1].split(NEXT_SECTION)[0]


def other_calls_rows() -> dict[str, list[str]]:
    """The page's "What else `urls.compresr` feeds" table: release -> its cells."""
    section = page_section().split("#### What else `urls.compresr` feeds")[1]
    table = [r for r in section.split("\n\n")[2].splitlines() if r.startswith("| v")]
    return {r.split(" | ")[0].strip("| "): r.strip("| ").split(" | ")[1:] for r in table}


def fixture_paths() -> dict[str, str]:
    """The shared fixtures' README: contract letter -> the path column of its table."""
    rows = [r for r in FIXTURE_README.read_text().splitlines() if re.match(r"\| [A-D] \|", r)]
    return {r.split("|")[1].strip(): r.split("|")[4].strip() for r in rows}


def release_rows_paths() -> dict[str, str]:
    """The release table's path column."""
    section = page_section()
    rows = [r for r in section.split("\n\n")[2].splitlines() if r.startswith("| v")]
    return {r.split(" | ")[0].strip("| "): r.split(" | ")[2] for r in rows}


def dig(config: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        config = config.get(key) or {}
    return config


def host(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0] if "://" in url else ""


@pytest.mark.parametrize(
    ("block", "row", "endpoint", "features", "named"), LINES, ids=[line[1] for line in LINES]
)
def test_each_block_sends_only_tool_discovery_to_us_where_the_release_can(
    block: str,
    row: str,
    endpoint: tuple[str, ...] | None,
    features: dict[tuple[str, ...], set[str]],
    named: list[str],
) -> None:
    """Where the release posts to an endpoint as written, the block gives a full URL to us
    and leaves ``urls.compresr`` elsewhere; where it cannot, ``urls.compresr`` is ours and
    every setting that would follow it is off Compresr's strategies."""
    config = yaml_blocks()[block]
    compresr = dig(config, ("urls", "compresr")) or ""
    if endpoint is not None:
        url = dig(config, endpoint)
        assert url.startswith("http://"), url
        assert host(url) == US, url
        assert host(compresr) != US
    else:
        assert host(compresr) == US
        for keys, strategies in features.items():
            setting = dig(config, keys)
            assert setting, f"the block must name {'.'.join(keys)}"
            assert setting.get("enabled") is False or setting.get("strategy") not in strategies


@pytest.mark.parametrize(
    ("block", "row", "endpoint", "features", "named"), LINES, ids=[line[1] for line in LINES]
)
def test_the_readme_says_what_else_urls_compresr_feeds(
    block: str,
    row: str,
    endpoint: tuple[str, ...] | None,
    features: dict[tuple[str, ...], set[str]],
    named: list[str],
) -> None:
    cells = other_calls_rows()[row]
    text = " ".join(cells)
    for phrase in named:
        assert phrase in text, (row, phrase)
    alone, lost = cells[2], cells[3]
    assert alone.startswith("yes" if endpoint else "no:"), alone
    assert (lost == "nothing") is (endpoint is not None), lost
    if endpoint is not None:
        assert f"`{'.'.join(endpoint)}` is posted to as written" in alone


def test_every_release_line_says_what_else_urls_compresr_feeds() -> None:
    """The pre-filter range splits where the summarizer starts reading it (v0.4.4)."""
    lines = set(release_rows()) - {"v0.4.2-v0.5.1"} | {"v0.4.2-v0.4.3", "v0.4.4-v0.5.1"}
    assert set(other_calls_rows()) == lines


def test_the_paths_agree_with_what_the_releases_put_on_the_wire() -> None:
    """The fixtures' own account of each contract's path: B (v0.4.2-v0.5.1) posts to a fixed
    path, so only ``urls.compresr`` reaches us; A, C and D post to the block's endpoint."""
    paths = fixture_paths()
    assert "(fixed)" in paths["B"]
    assert "fixed" in release_rows_paths()["v0.4.2-v0.5.1"]
    assert "`api.endpoint`" in paths["A"]
    assert all("`compresr.endpoint`" in paths[c] for c in "CD")
    for release in ("v0.5.2", "v0.5.3 to today"):
        assert "`pipes.tool_discovery.compresr.endpoint`" in release_rows_paths()[release]
    assert "`api.endpoint` as written" in release_rows_paths()["v0.4.0-v0.4.1"]


def test_a_path_we_do_not_serve_is_a_failure_the_proxy_falls_back_on() -> None:
    """The log: a path tool-selector did not serve got ``404 not_found``, which the proxy
    logged as ``api_fallback_api_error`` and fell back on; the page says it answers the
    other features' paths that way."""
    failed = [
        r.get("compressed_content") or r.get("error_detail") or ""
        for r in log_lines()
        if r.get("status") == "api_fallback_api_error"
    ]
    assert any(d.startswith('status=404 body={"code":"not_found"') for d in failed)
    assert "(it answers them `404 not_found`)" in " ".join(page_section().split())


def test_the_section_names_no_path_outside_the_repository() -> None:
    assert "../" not in page_section()


def test_openapi_tells_operators_what_urls_compresr_also_feeds() -> None:
    info = build_openapi(Settings())["info"]["description"]
    for phrase in (
        "`urls.compresr`",
        TOOL_OUTPUT,
        HISTORY,
        "`pipes.tool_discovery.api.endpoint`",
        "`pipes.tool_discovery.compresr.endpoint`",
        "v0.4.2-v0.5.1",
        "uncompressed",
        "`COMPRESR_BASE_URL`",
    ):
        assert phrase in info, phrase
