"""ShadowCompare records agreement and swallows its own errors."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client import CollectorRegistry

from tool_selector.errors import ConfigError
from tool_selector.http.shadow import ShadowCompare, relevance_picks
from tool_selector.metrics import ShadowMetrics
from tool_selector.ranking.catalog import build_catalog, dedupe
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

TOOLS = [
    Tool(name="slack_send", description="Send a Slack message"),
    Tool(name="slack_send", description="duplicate"),
    Tool(name="read_file", definition={"function": {"name": "read_file", "description": "Read"}}),
]


CATALOG = build_catalog(dedupe(TOOLS)[0])


def _shadow() -> tuple[ShadowCompare, CollectorRegistry]:
    registry = CollectorRegistry()
    return ShadowCompare(ShadowMetrics(registry)), registry


def test_relevance_picks_read_definitions_and_merge_duplicates() -> None:
    request = SearchRequest(pattern="read slack", tools=TOOLS, top_k=5)
    assert relevance_picks(request, CATALOG) == ["slack_send", "read_file"]


def test_relevance_picks_need_no_decoded_tools() -> None:
    """A resent tool list reaches the shadow with ``tools=[]``; the catalog has them."""
    request = SearchRequest(pattern="read slack", tools=[], top_k=5)
    assert relevance_picks(request, CATALOG) == ["slack_send", "read_file"]


@pytest.mark.parametrize(
    ("selected", "keep", "labels"),
    [
        (["slack_send"], [], {"top1": "agree", "side": "none"}),
        (["read_file"], [], {"top1": "disagree", "side": "none"}),
        (["read_file"], ["read_file"], {"top1": "not_comparable", "side": "selector"}),
    ],
    ids=["agree", "disagree", "forced_only"],
)
def test_compare_records_top1_and_abstain(
    selected: list[str], keep: list[str], labels: dict[str, str]
) -> None:
    shadow, registry = _shadow()
    request = SearchRequest(pattern="slack message", tools=TOOLS, always_keep=keep)
    shadow.compare(request, CATALOG, selected)
    value = registry.get_sample_value
    assert value("tool_selector_shadow_top1_total", {"result": labels["top1"]}) == 1
    assert value("tool_selector_shadow_abstain_total", {"side": labels["side"]}) == 1


def test_errors_are_swallowed_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    shadow, registry = _shadow()

    def boom(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(shadow, "compare", boom)
    shadow.submit(SearchRequest(pattern="x", tools=TOOLS), CATALOG, [])
    shadow.close()
    assert registry.get_sample_value("tool_selector_shadow_errors_total") == 1


def test_full_queue_skips_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = CollectorRegistry()
    shadow = ShadowCompare(ShadowMetrics(registry), max_pending=1)
    busy, release = threading.Event(), threading.Event()

    def slow(*_: object) -> None:
        busy.set()
        release.wait(10)

    monkeypatch.setattr(shadow, "compare", slow)
    request = SearchRequest(pattern="x", tools=TOOLS)
    shadow.submit(request, CATALOG, [])
    busy.wait(10)
    accepted = [shadow.submit(request, CATALOG, []) for _ in range(2)]
    release.set()
    shadow.close()
    assert accepted == [True, False]
    assert registry.get_sample_value("tool_selector_shadow_skipped_total") == 1


@pytest.mark.parametrize(
    ("raw", "expected"), [("none", "none"), ("relevance", "relevance")], ids=["none", "relevance"]
)
def test_shadow_setting_parses(raw: str, expected: str) -> None:
    assert Settings.from_env({"TOOL_SELECTOR_SHADOW": raw}).shadow == expected


def test_shadow_setting_refuses_unknown_values() -> None:
    with pytest.raises(ConfigError, match="TOOL_SELECTOR_SHADOW"):
        Settings.from_env({"TOOL_SELECTOR_SHADOW": "bm25"})


def test_handing_off_needs_no_worker_thread() -> None:
    shadow, registry = _shadow()
    task = shadow.task(SearchRequest(pattern="slack message", tools=TOOLS), CATALOG, ["slack_send"])

    async def go() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(1))
        release = threading.Event()
        busy = loop.run_in_executor(None, release.wait, 10)  # every worker thread is busy
        try:
            await asyncio.wait_for(task(), 5)
        finally:
            release.set()
            await busy

    asyncio.run(go())
    shadow.close()
    assert registry.get_sample_value("tool_selector_shadow_comparisons_total") == 1


def test_shadow_thread_rests_in_proportion_to_its_work(monkeypatch: pytest.MonkeyPatch) -> None:
    shadow = ShadowCompare(ShadowMetrics(CollectorRegistry()), max_busy=0.25)
    rests: list[float] = []
    monkeypatch.setattr(shadow, "compare", lambda *_: time.sleep(0.05))
    monkeypatch.setattr(shadow, "_rest", rests.append)
    shadow.submit(SearchRequest(pattern="x", tools=TOOLS), CATALOG, [])
    shadow.close()
    assert len(rests) == 1
    assert rests[0] >= 3 * 0.05  # busy 25% at most: 3x the work time at rest
