"""A search answered while the model loads is remembered without a pattern vector: its
feedback is a 404 that says so, not one that could be any unknown id; searches after the
load take feedback as ever. In process, the model held back by the test."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.fakes import HashingEncoder
from tests.support import wait_until
from tool_selector.embeddings.encoder import Encoder
from tool_selector.http.app import create_app
from tool_selector.settings import Settings
from tool_selector_client.wire import FEEDBACK_PATH, SCOPE_HEADER, SEARCH_ID_HEADER, SEARCH_PATH

TOOLS = [
    {"name": "list_tables", "description": "List the tables of a database"},
    {"name": "send_email", "description": "Send an email message to a person"},
]
Loading = tuple[TestClient[Any], threading.Event]


@pytest.fixture
def loading(tmp_path: Path) -> Iterator[Loading]:
    loaded = threading.Event()

    def held_back(_: Settings) -> Encoder:
        loaded.wait(30)
        return HashingEncoder()

    settings = Settings(
        learn_dir=str(tmp_path / "learn"),
        static_model_path=str(tmp_path / "no-table"),
        multilingual=False,
        second_encoder=False,
        calibrate_encode=False,
    )
    with TestClient(create_app(settings, encoder_factory=held_back)) as client:
        try:
            yield client, loaded
        finally:
            loaded.set()


def search(client: TestClient[Any]) -> str:
    body = {"pattern": "list the tables", "tools": TOOLS, "top_k": 1}
    r = client.post(SEARCH_PATH, json=body, headers={SCOPE_HEADER: "loading"})
    assert r.status_code == 200
    return r.headers[SEARCH_ID_HEADER]


def feedback(client: TestClient[Any], search_id: str) -> Any:
    return client.post(FEEDBACK_PATH, json={"search_id": search_id, "called": ["list_tables"]})


def test_feedback_on_a_search_answered_while_the_model_loaded_says_so(loading: Loading) -> None:
    client, loaded = loading
    early = search(client)
    for _ in range(2):  # before the model is in, and after
        r = feedback(client, early)
        assert (r.status_code, r.json()["code"]) == (404, "unknown_search")
        assert f"search {early} was answered while the model was loading" in r.json()["detail"]
        loaded.set()
        wait_until(lambda: client.get("/readyz").status_code == 200, 30, "the model loaded")
    late = feedback(client, search(client))
    assert (late.status_code, late.json()["kept"]) == (200, True)


def test_an_id_never_answered_is_not_said_to_be_a_loading_search(loading: Loading) -> None:
    r = feedback(loading[0], "0" * 32)
    assert r.status_code == 404
    assert "loading" not in r.json()["detail"]
