"""A request in another language over English tools, through the real service (the
multilingual model and the glossary as shipped): the right tool, with the English words its
gloss gave BM25 in the explanation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support import SAMPLE_TOOLS, ServiceProcess, warm_catalog

TOOLS: list[dict[str, Any]] = list(SAMPLE_TOOLS)


@pytest.fixture(scope="module", autouse=True)
def warm(service: ServiceProcess) -> None:
    warm_catalog(service.url, TOOLS)


def search(service: ServiceProcess, pattern: str, **extra: Any) -> dict[str, Any]:
    body = {"pattern": pattern, "tools": TOOLS, "top_k": 2, **extra}
    r = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["x-tool-selector-ranking"] == "hybrid"
    result: dict[str, Any] = r.json()
    return result


@pytest.mark.parametrize(
    ("pattern", "tool"),
    [("请在日历上安排一个会议", "calendar.create_event"),
     ("Slack のチャンネルにメッセージを送って", "mcp__slack__send_message"),
     ("abre una incidencia nueva en el repositorio de GitHub", "mcp__github__create_issue"),
     ("Lies bitte die Datei von der lokalen Festplatte", "read_file")],
    ids=["zh", "ja", "es", "de"],
)  # fmt: skip
def test_a_request_in_another_language_finds_its_english_tool(
    service: ServiceProcess, pattern: str, tool: str
) -> None:
    assert search(service, pattern)["selected_names"][0] == tool


def test_the_explanation_shows_the_english_words_of_the_gloss(service: ServiceProcess) -> None:
    found = search(service, "请在日历上安排一个会议", explain=True)
    first = found["explanations"][0]
    assert first["name"] == "calendar.create_event"
    assert {"calendar", "meeting"} & set(first["matched_terms"])


def test_an_english_request_still_finds_its_tool(service: ServiceProcess) -> None:
    assert search(service, "schedule a meeting on my calendar")["selected_names"][0] == (
        "calendar.create_event"
    )
