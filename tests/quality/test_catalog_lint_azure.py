"""The catalog report on Azure MCP's 180 near-sibling tools (issue V part 7): its advice
names content words only, and every sibling finding stands on a probe the service really
answers with the wrong tool (asked again here)."""

import math
import re

import pytest

from tests.support import BENCH_SLICE
from tool_selector.embeddings.encoder import Encoder
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.lint.report import lint
from tool_selector.lint.siblings import DOING
from tool_selector.lint.words import FUNCTION_WORDS, vocabulary
from tool_selector.lru import BoundedLRU
from tool_selector.offline.lint_cli import read_catalog
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.text import tool_text
from tool_selector.ranking.tokenize import stem
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import LintReport
from tool_selector_client.wire import Tool

AZURE = BENCH_SLICE / "azure_mcp" / "tools.jsonl"
#: What the report told operators to lead with before (the issue's list).
ISSUE_WORDS = {"optionally", "either", "within", "must", "each", "no", "used", "azure"}
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def tools() -> list[Tool]:
    return read_catalog(AZURE)


@pytest.fixture(scope="module")
def selector() -> Selector:
    encoder: Encoder | None = encoder_from_settings(Settings())
    assert encoder is not None
    return Selector(encoder=encoder, catalogs=CatalogStore(10_000),
                    queries=BoundedLRU(10_000), embed_deadline=math.inf)  # fmt: skip


@pytest.fixture(scope="module")
def report(selector: Selector, tools: list[Tool]) -> LintReport:
    return lint(selector, ToolSource.of(tools))


def named(report: LintReport) -> set[str]:
    """Every word a finding's advice names: its ``apart`` lists and the words its fix quotes."""
    words = {w for f in report.findings for ws in f.apart.values() for w in ws}
    return words | {w for f in report.findings for w in re.findall(r"'([^']+)'", f.fix)}


def test_no_advice_names_a_function_word(report: LintReport) -> None:
    assert named(report)
    assert not named(report) & (FUNCTION_WORDS | ISSUE_WORDS)


def test_no_advice_names_a_word_most_of_the_catalog_has(
    report: LintReport, tools: list[Tool]
) -> None:
    words = vocabulary([tool_text(t) for t in tools])
    assert not {w for w in named(report) if words.tools_with[stem(w)] > len(tools) / 2}


def test_every_sibling_finding_has_a_probe_answered_with_the_wrong_tool(
    report: LintReport, selector: Selector, tools: list[Tool]
) -> None:
    found = [f for f in report.findings if f.kind == "siblings"]
    assert found
    for finding in found:
        assert finding.misled
        for m in finding.misled:
            assert m.source in DOING
            assert {m.tool, m.answered} <= set(finding.tools)
            asked = Ask(pattern=m.probe, tools=ToolSource.of(tools), top_k=report.top_k)
            names = list(selector.select(asked).ranking.names)
            assert m.answered in names
            assert names.index(m.answered) < [*names, m.tool].index(m.tool)


def test_sibling_findings_come_most_costly_first(report: LintReport) -> None:
    misled = [len(f.misled) for f in report.findings if f.kind == "siblings"]
    assert misled == sorted(misled, reverse=True)
