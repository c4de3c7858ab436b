"""A new catalog's first answer through the real service: the static arm's leaders re-ranked
by the models' own vectors when the embedding deadline has room (``pipeline.shortlist``),
said as such in the headers and the search's log line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import ServiceProcess, start_service, wait_until
from tool_selector.embeddings.models import BGE_SMALL, MINILM
from tool_selector_client.wire import SEARCH_ID_HEADER, SEARCH_PATH

#: Too many tools to embed within the deadline, each generated: no other test warms them.
THINGS = ["invoices", "tickets", "playlists", "recipes", "flights", "parcels", "shifts", "leads"]
VERBS = ["list", "create", "archive", "export", "share", "rename", "merge", "audit"]
TOOLS = [
    {"name": f"{verb}_{thing}_{i}", "description": f"{verb.title()} {thing} in workspace {i}"}
    for i in range(8)
    for thing in THINGS
    for verb in VERBS
] + [{"name": "send_chat_message", "description": "Post a message to a team chat channel"}]


@pytest.fixture(scope="module")
def roomy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """A service whose requests may wait 1.5 s for embedding: room for ten tools' vectors
    (predicted at 0.4 ms a character, no rate measured at start: ten of these texts, about
    46 characters each, 0.18 s a model), not for 513 (9.4 s a model)."""
    env = {"TOOL_SELECTOR_EMBED_DEADLINE_MS": "1500", "TOOL_SELECTOR_CALIBRATE_ENCODE": "false"}
    proc = start_service(tmp_path_factory.mktemp("roomy"), env)
    yield proc
    proc.stop()


def logged(service: ServiceProcess, sid: str) -> dict[str, object]:
    def find() -> dict[str, object] | None:
        return next((r for r in service.searches() if r.get("search_id") == sid), None)

    return wait_until(find, 10, f"the log line of search {sid}")


def answered(
    service: ServiceProcess, pattern: str, tools: list[dict[str, str]]
) -> tuple[httpx.Response, dict[str, object]]:
    """The service's top three of ``tools`` for ``pattern`` (a 200) and its search's log line."""
    body = {"pattern": pattern, "tools": tools, "top_k": 3}
    r = httpx.post(service.url + SEARCH_PATH, json=body, timeout=60)
    assert r.status_code == 200, r.text
    return r, logged(service, r.headers[SEARCH_ID_HEADER])


def test_the_first_answer_is_the_models_reading_of_the_static_leaders(
    roomy: ServiceProcess,
) -> None:
    r, record = answered(roomy, "post a note in the team chat room", TOOLS)
    assert r.json()["selected_names"][0] == "send_chat_message"
    assert (r.headers["x-tool-selector-ranking"], r.headers["x-tool-selector-embedded"]) == (
        "static",
        "partial",
    )
    ranking = record["ranking"]
    assert isinstance(ranking, dict)
    models = f"{MINILM.model_id}+{BGE_SMALL.model_id}"  # after the two static tables' ids
    assert (ranking["arm"], ranking["embedded"]) == ("shortlist", "partial")
    model = ranking["model"]
    assert isinstance(model, str)
    assert model.endswith(models)
    assert model.count("+") == 3


def test_with_the_shortlist_off_the_static_arm_answers(tmp_path: Path) -> None:
    env = {
        "TOOL_SELECTOR_EMBED_DEADLINE_MS": "1500",
        "TOOL_SELECTOR_SHORTLIST_TOOLS": "0",
        "TOOL_SELECTOR_CALIBRATE_ENCODE": "false",
    }
    proc = start_service(tmp_path, env)
    try:
        r, record = answered(proc, "post a note in the team chat room", TOOLS)
        ranking = record["ranking"]
        assert isinstance(ranking, dict)
        assert (r.headers["x-tool-selector-ranking"], ranking["arm"]) == ("static", "static")
        assert ranking["embedded"] == "none"
    finally:
        proc.stop()


RATES = re.compile(r"encode rates measured at start, microseconds a character: (.+)")


def test_the_service_measures_each_models_rate_at_start(
    service: ServiceProcess, roomy: ServiceProcess
) -> None:
    """At embedded defaults each model is timed before the replica is ready, and its rate
    logged; with ``TOOL_SELECTOR_CALIBRATE_ENCODE=false`` (``roomy``) nothing is timed."""
    found = RATES.search(service.log())
    assert found is not None, service.log()[-2000:]
    rates = dict(part.rsplit(" ", 1) for part in found.group(1).split(", "))
    assert list(rates) == [MINILM.model_id, BGE_SMALL.model_id]
    assert all(float(r) > 0 for r in rates.values())
    assert RATES.search(roomy.log()) is None


#: A catalog where the static tables see no weather in "umbrella needed?" and the models do
#: (nine of ``tests/unit/test_shortlist.py``'s seventeen tools).
RESCUED_TOOLS = [
    {"name": f"tool_{i}", "description": f"Manage the {thing} of a project"}
    for i, thing in enumerate("issues labels milestones releases branches tags webhooks".split())
] + [
    {"name": "send_message", "description": "Post a message to a Slack channel"},
    {"name": "get_weather", "description": "Current weather and forecast for a city"},
]


def test_a_rescue_is_counted_and_logged(tmp_path: Path) -> None:
    """No room within the deadline, so the first answer is the static arm's; where it says no
    match the models read its leaders (``rescue``), as the log line and the metric say; an
    answer with tools is not rescued (``rescue``: null)."""
    env = {
        "TOOL_SELECTOR_EMBED_DEADLINE_MS": "0",
        "TOOL_SELECTOR_SHORTLIST_RESCUE_MS": "10000",
        "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "15",  # a rescue must fit in the deadline
        "TOOL_SELECTOR_CALIBRATE_ENCODE": "false",
    }
    proc = start_service(tmp_path, env)
    try:
        r, record = answered(proc, "umbrella needed?", RESCUED_TOOLS)
        assert r.json()["selected_names"][0] == "get_weather"
        assert isinstance(record["ranking"], dict)
        assert (r.headers["x-tool-selector-ranking"], record["ranking"]["arm"]) == (
            "static",
            "shortlist",
        )
        assert record["rescue"] == "read"
        other = [{**t, "name": t["name"] + "_2"} for t in RESCUED_TOOLS]  # a new catalog
        plain, plain_record = answered(proc, "post a message to the Slack channel", other)
        assert plain.json()["selected_names"][0] == "send_message_2"
        assert plain_record["rescue"] is None
        metrics = httpx.get(proc.url + "/metrics").text
        assert 'tool_selector_rescues_total{result="read"} 1.0' in metrics
        assert 'tool_selector_rescues_total{result="declined"} 0.0' in metrics
    finally:
        proc.stop()
