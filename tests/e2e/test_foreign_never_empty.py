"""A request in another language on a catalog seen for the first time, through the real
service: never answered empty, on the static arm (the model has not embedded the catalog) and
on the lexical service.

Measured on Context Gateway v0.4.3: the German request below, sent as its
pre-filter sends it over its 150 tools, got ``no_match`` on the static arm, and the proxy then
forwarded all 150 tools. The body is ``tests/fixtures/context-gateway/``' B
fixture with the request in its ``query``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from tests.support import ROOT, ServiceProcess

FIXTURE = ROOT / "tests" / "fixtures" / "context-gateway" / "B-v0.4.3-prefilter.json"
COMPRESS = "/api/compress/tool-discovery/"
GERMAN = "Welche Wandfarbe ist derzeit für Wohnzimmer am beliebtesten?"
#: "What time is it in Tokyo now?": no word of it is in the glossary.
UNGLOSSED = "東京は今何時"


def first_seen(query: str) -> dict[str, Any]:
    """The pre-filter's body with ``query``, over its tools made new to the service (a marker
    in each description: no cached vector, no stored catalog)."""
    body: dict[str, Any] = json.loads(FIXTURE.read_bytes())
    marker = uuid.uuid4().hex[:8]
    for tool in body["tools"]:
        tool["description"] = f"{tool['description']} ({marker})"
    return {**body, "query": query}


def prefilter(url: str, body: dict[str, Any]) -> tuple[str, list[str]]:
    """The ranking path that answered and the names v0.4.3 reads."""
    r = httpx.post(url + COMPRESS, json=body, timeout=30)
    assert r.status_code == 200, r.text
    payload = r.json()
    assert payload["success"] is True
    names: list[str] = payload["data"]["relevant_tools"]
    return r.headers["x-tool-selector-ranking"], names


def test_the_german_request_on_the_static_arm_finds_its_tool(service: ServiceProcess) -> None:
    path, names = prefilter(service.url, first_seen(GERMAN))
    assert (path, names[0]) == ("static", "paint_color_trends")


def test_the_german_request_on_the_lexical_service_finds_its_tool(
    lexical_service: ServiceProcess,
) -> None:
    path, names = prefilter(lexical_service.url, first_seen(GERMAN))
    assert (path, names[0]) == ("lexical", "paint_color_trends")


@pytest.mark.parametrize("fixture", ["service", "lexical_service"])
def test_a_request_no_path_can_read_is_still_answered(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    proc: ServiceProcess = request.getfixturevalue(fixture)
    body = first_seen(UNGLOSSED)
    path, names = prefilter(proc.url, body)
    assert path == ("static" if fixture == "service" else "lexical")
    assert 0 < len(names) <= body["max_tools"]
