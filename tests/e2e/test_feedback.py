"""Feedback over HTTP on the real service: a search's id takes back what the model called;
evidence survives a restart, is shared through Redis, and a forgotten scope answers as
before."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import ServiceProcess, start_redis, start_service, wait_until, warm_catalog
from tool_selector_client.wire import (
    COMPRESS_PATH,
    FEEDBACK_PATH,
    SCOPE_HEADER,
    SEARCH_ID_HEADER,
    SEARCH_PATH,
)

#: One encoder and no multilingual arm: the service starts in a few seconds.
LIGHT = {"TOOL_SELECTOR_SECOND_ENCODER": "false", "TOOL_SELECTOR_MULTILINGUAL": "false"}
TOOLS = [
    {"name": "list_tables", "description": "List the tables of a database"},
    {"name": "get_table_schema", "description": "Show the columns and types of a table"},
    {"name": "read_rows", "description": "Read rows of a table in a database"},
    {"name": "send_email", "description": "Send an email message to a person"},
]
#: Asked in the scope, then taught: near searches whose model called ``TAUGHT``.
ASKED = "what is in the orders table of my shop database"
TEACHING = [
    "what is in the customers table of my shop database",
    "what is in the invoices table of my shop database",
    "what is in the orders table of my shop database please",
]
TAUGHT = "get_table_schema"


def search(service: ServiceProcess, pattern: str, scope: str = "e2e") -> httpx.Response:
    body = {"pattern": pattern, "tools": TOOLS, "top_k": 3}
    return httpx.post(
        service.url + SEARCH_PATH, json=body, headers={SCOPE_HEADER: scope}, timeout=30
    )


def feedback(service: ServiceProcess, body: Any, **kw: Any) -> httpx.Response:
    return httpx.post(service.url + FEEDBACK_PATH, json=body, timeout=30, **kw)


def teach(service: ServiceProcess, times: int = 4) -> None:
    for _ in range(times):
        for pattern in TEACHING:
            sid = search(service, pattern).headers[SEARCH_ID_HEADER]
            assert feedback(service, {"search_id": sid, "called": [TAUGHT]}).json()["kept"]


@pytest.fixture(scope="module")
def learning(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    proc = start_service(tmp_path_factory.mktemp("learning"), LIGHT)
    warm_catalog(proc.url, TOOLS)
    yield proc
    proc.stop()


def test_feedback_on_a_search_is_kept_once(learning: ServiceProcess) -> None:
    r = search(learning, "list the tables", scope="once")
    shown = r.json()["selected_names"]
    sid = r.headers[SEARCH_ID_HEADER]
    first = feedback(learning, {"search_id": sid, "called": [shown[0], "not_shown"]})
    assert first.status_code == 200
    assert first.json() == {
        "kept": True,
        "called": [shown[0]],
        "unshown": ["not_shown"],
        "duplicate": False,
    }
    again = feedback(learning, {"search_id": sid, "called": []})
    assert (again.status_code, again.json()["duplicate"]) == (200, True)
    unshown = feedback(learning, {"search_id": sid, "called": ["not_shown"]})
    assert (unshown.status_code, unshown.json()["duplicate"]) == (200, True)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"search_id": "0" * 32, "called": []}, 404, "unknown_search"),
        ({"search_id": "nope", "called": []}, 400, "invalid_request"),
        ({"search_id": "0" * 32, "called": "read_rows"}, 400, "invalid_request"),
        ({"called": []}, 400, "invalid_request"),
        ({"search_id": "0" * 32 + "\n", "called": []}, 400, "invalid_request"),
        ({"search_id": "0" * 32, "called": ["read_rows\n"]}, 400, "invalid_name"),
        ({"search_id": "0" * 32, "called": ["read_rows", "  "]}, 400, "invalid_name"),
        ({"search_id": "0" * 32, "called": ["r" * 257]}, 400, "name_too_long"),
        ({"search_id": "0" * 32, "called": ["read\u0085rows"]}, 400, "invalid_request"),
    ],
    ids=[
        "unknown id",
        "bad id",
        "called not a list",
        "no id",
        "id with a last line break",
        "called with a last line break",
        "called blank",
        "called too long",
        "called with a control character of C1",
    ],
)
def test_bad_feedback_is_a_json_error_naming_the_field(
    learning: ServiceProcess, body: dict[str, Any], status: int, code: str
) -> None:
    r = feedback(learning, body)
    assert r.status_code == status
    assert r.json()["code"] == code
    if status == 400:
        assert "search_id" in r.json()["detail"] or "called" in r.json()["detail"]


@pytest.mark.parametrize(
    "bad",
    ["read\x01rows", "read\u0085rows", "read_rows\n", "  ", "r" * 257],
    ids=["control", "control-c1", "line-break", "blank", "too-long"],
)
def test_a_refused_called_name_is_named_by_its_index(learning: ServiceProcess, bad: str) -> None:
    r = feedback(learning, {"search_id": "0" * 32, "called": ["read_rows", "list_tables", bad]})
    assert r.status_code == 400
    assert "called[2]" in r.json()["detail"]


def test_a_search_of_the_compress_contract_takes_feedback(learning: ServiceProcess) -> None:
    body = {"query": "list the tables of the database", "tools": TOOLS, "max_tools": 3}
    r = httpx.post(
        learning.url + COMPRESS_PATH, json=body, headers={SCOPE_HEADER: "compress"}, timeout=30
    )
    shown = r.json()["data"]["relevant_tools"]
    taken = feedback(learning, {"search_id": r.headers[SEARCH_ID_HEADER], "called": shown[:1]})
    assert (taken.status_code, taken.json()["kept"], taken.json()["called"]) == (
        200,
        True,
        shown[:1],
    )


def feedback_counts(service: ServiceProcess) -> dict[str, float]:
    text = httpx.get(service.url + "/metrics", timeout=30).text
    found = re.findall(r'^tool_selector_feedback_total\{result="(\w+)"\} (\S+)$', text, re.M)
    return {result: float(value) for result, value in found}


def test_feedback_is_counted_by_result(learning: ServiceProcess) -> None:
    before = feedback_counts(learning)
    sid = search(learning, "read the rows", scope="counted").headers[SEARCH_ID_HEADER]
    feedback(learning, {"search_id": sid, "called": []})
    feedback(learning, {"search_id": sid, "called": []})
    feedback(learning, {"search_id": "0" * 32, "called": []})
    feedback(learning, {"search_id": "nope", "called": []})
    after = feedback_counts(learning)
    for result in ("accepted", "duplicate", "unknown_search", "bad_request"):
        assert after[result] == before.get(result, 0.0) + 1, result


KEY = "f" * 32


def test_feedback_wants_the_search_s_token_and_size_cap(tmp_path: Path) -> None:
    env = {**LIGHT, "TOOL_SELECTOR_API_KEYS": KEY, "TOOL_SELECTOR_MAX_BODY_BYTES": "4096"}
    keyed = start_service(tmp_path, env)
    token = {"Authorization": f"Bearer {KEY}"}
    try:
        body = {"pattern": "list the tables", "tools": TOOLS}
        r = httpx.post(keyed.url + SEARCH_PATH, json=body, headers=token, timeout=30)
        sid = r.headers[SEARCH_ID_HEADER]
        assert feedback(keyed, {"search_id": sid, "called": []}).status_code == 401
        gone = httpx.delete(keyed.url + FEEDBACK_PATH, params={"scope": "x"}, timeout=30)
        assert gone.status_code == 401
        big = {"search_id": sid, "called": ["t" * 100] * 60}
        refused = feedback(keyed, big, headers=token)
        assert (refused.status_code, refused.json()["code"]) == (413, "payload_too_large")
        assert feedback(keyed, {"search_id": sid, "called": []}, headers=token).json()["kept"]
    finally:
        keyed.stop()


def test_feedback_wants_json(learning: ServiceProcess) -> None:
    r = httpx.post(learning.url + FEEDBACK_PATH, content=b"{}", timeout=30)
    assert (r.status_code, r.json()["code"]) == (415, "unsupported_media_type")


def test_a_scope_learns_and_forgetting_gives_its_answers_back(learning: ServiceProcess) -> None:
    before = search(learning, ASKED).json()["selected_names"]
    other = search(learning, ASKED, scope="elsewhere").json()["selected_names"]
    teach(learning)
    taught = wait_until(
        lambda: (names := search(learning, ASKED).json()["selected_names"])[0] == TAUGHT and names,
        10,
        "the taught tool first",
    )
    assert before[0] != TAUGHT
    assert taught[0] == TAUGHT
    assert search(learning, ASKED, scope="elsewhere").json()["selected_names"] == other
    gone = httpx.delete(learning.url + FEEDBACK_PATH, params={"scope": "e2e"}, timeout=30)
    assert gone.json() == {"forgotten": "e2e"}
    assert search(learning, ASKED).json()["selected_names"] == before


def test_what_was_learned_survives_a_restart(tmp_path: Path) -> None:
    env = {**LIGHT, "TOOL_SELECTOR_LEARN_DIR": str(tmp_path / "kept")}
    first = start_service(tmp_path, env)
    try:
        warm_catalog(first.url, TOOLS)
        before = search(first, ASKED).json()["selected_names"]
        teach(first)
        wait_until(lambda: search(first, ASKED).json()["selected_names"][0] == TAUGHT, 10, "taught")
    finally:
        first.stop()
    second = start_service(tmp_path, env)
    try:
        warm_catalog(second.url, TOOLS)
        assert before[0] != TAUGHT
        assert search(second, ASKED).json()["selected_names"][0] == TAUGHT
    finally:
        second.stop()


def test_past_the_total_the_scope_fed_least_recently_is_dropped_whole(tmp_path: Path) -> None:
    room = str(len(TEACHING) * 4)  # one teaching fills all scopes' room
    env = {**LIGHT, "TOOL_SELECTOR_LEARN_MAX_EVENTS": room}
    env["TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS"] = room
    env["TOOL_SELECTOR_LEARN_CALLER_SHARE"] = "1"  # one caller here: it may fill the scope
    env["TOOL_SELECTOR_LEARN_REFRESH_MS"] = "0"
    service = start_service(tmp_path, env)
    try:
        warm_catalog(service.url, TOOLS)
        before = search(service, ASKED).json()["selected_names"]
        teach(service)
        assert search(service, ASKED).json()["selected_names"][0] == TAUGHT
        sid = search(service, "list the tables", scope="newer").headers[SEARCH_ID_HEADER]
        assert feedback(service, {"search_id": sid, "called": ["list_tables"]}).json()["kept"]
        assert search(service, ASKED).json()["selected_names"] == before  # "e2e" dropped
        metrics = httpx.get(service.url + "/metrics", timeout=30).text
        assert re.search(r"^tool_selector_learn_scopes_dropped_total 1\.0$", metrics, re.M)
        assert "scope 'e2e' dropped whole" in service.log()
    finally:
        service.stop()


def test_a_replica_sharing_redis_answers_with_what_the_other_learned(tmp_path: Path) -> None:
    redis = start_redis(tmp_path, persistent=True)
    env = {**LIGHT, "TOOL_SELECTOR_LEARN_REDIS_URL": redis.url}
    env["TOOL_SELECTOR_LEARN_REFRESH_MS"] = "200"
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    one, two = start_service(tmp_path / "one", env), start_service(tmp_path / "two", env)
    try:
        for replica in (one, two):
            warm_catalog(replica.url, TOOLS)
        assert search(two, ASKED).json()["selected_names"][0] != TAUGHT
        teach(one)  # every search and its feedback on replica one
        sid = search(two, "list the tables").headers[SEARCH_ID_HEADER]
        assert feedback(one, {"search_id": sid, "called": []}).json()["kept"]  # two's search
        wait_until(
            lambda: search(two, ASKED).json()["selected_names"][0] == TAUGHT,
            10,
            "replica two reading replica one's evidence",
        )
    finally:
        one.stop()
        two.stop()
        redis.stop()


def test_without_an_encoder_feedback_says_learning_needs_one(tmp_path: Path) -> None:
    """``TOOL_SELECTOR_ENCODER=none``: no vector to learn with, so feedback is a clear 404
    (not ``unknown_search`` for a search the answer named); a bad body or scope header is
    still a 400 naming what is wrong."""
    lexical = start_service(tmp_path, {"TOOL_SELECTOR_ENCODER": "none"}, wait_ready=False)
    try:
        r = search(lexical, "list the tables")
        off = feedback(lexical, {"search_id": r.headers[SEARCH_ID_HEADER], "called": []})
        assert (off.status_code, off.json()["code"]) == (404, "learning_off")
        assert "TOOL_SELECTOR_ENCODER=none" in off.json()["detail"]
        bad = feedback(lexical, {"search_id": r.headers[SEARCH_ID_HEADER]})
        assert (bad.status_code, bad.json()["code"]) == (400, "invalid_request")
        assert "called" in bad.json()["detail"]
        spaced = search(lexical, "list the tables", scope="two words")
        assert (spaced.status_code, spaced.json()["code"]) == (400, "invalid_scope")
        for name in ("probe\n", "", "x" * 129):  # "$" matched before a last line break
            gone = httpx.delete(lexical.url + FEEDBACK_PATH, params={"scope": name}, timeout=30)
            assert (gone.status_code, gone.json()["code"]) == (400, "invalid_scope")
    finally:
        lexical.stop()
