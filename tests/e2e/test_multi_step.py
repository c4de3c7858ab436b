"""A two-step task over HTTP: each step gets its tool, and the first tool stays first
(the default service, ``TOOL_SELECTOR_MULTI_STEP`` on, against one with it off); a short
request of two sentences is one need, ranked whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import ServiceProcess, start_service, warm_catalog

TOOLS: list[dict[str, Any]] = [
    {"name": "create_shipment", "description": "Create a shipment from a sender to a recipient."},
    {
        "name": "create_parcel_label",
        "description": "Create a parcel shipping label for a shipment.",
    },
    {"name": "track_shipment", "description": "Track the delivery status of a shipment."},
    {"name": "cancel_shipment", "description": "Cancel a shipment before it is picked up."},
    {
        "name": "update_shipment_address",
        "description": "Change the delivery address of a shipment.",
    },
    {"name": "refund_order", "description": "Issue a refund for an order by its id."},
    {"name": "send_email", "description": "Send an email to a recipient."},
    {"name": "get_weather", "description": "Current weather for a city."},
]
SHORT = (
    "Create a shipment of perishable food from Emma Smith to Daniel at 456 Elm Avenue. "
    "Then issue a refund for order ord123456."
)
#: 250 characters or more: the shipped rule's multi-step task (``steps.SHIPPED_STEPS``), a
#: step a sentence (two needs joined by "and" are one clause, read as one step)
TASK = (
    "Track the delivery status of shipment shp-99812, which left the Springfield depot on "
    "Monday and has not moved since. Then cancel shipment shp-99813 before it is picked up "
    "this afternoon. Issue a refund for order ord123456. Finally, send an email to the "
    "recipient."
)


@pytest.fixture(scope="module")
def off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """The real service with multi-step ranking off (every pattern ranked whole)."""
    env = {"TOOL_SELECTOR_MULTI_STEP": "false"}
    proc = start_service(tmp_path_factory.mktemp("whole"), env)
    yield proc
    proc.stop()


def search(service: ServiceProcess, pattern: str = TASK) -> list[str]:
    warm_catalog(service.url, TOOLS)
    body = {"pattern": pattern, "tools": TOOLS, "top_k": 4}
    r = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=30)
    assert r.status_code == 200, r.text
    names: list[str] = r.json()["selected_names"]
    return names


def test_a_two_step_task_gets_a_tool_for_each_step(
    service: ServiceProcess, off: ServiceProcess
) -> None:
    assert len(TASK) >= 250
    steps, whole = search(service), search(off)
    assert steps[0] == whole[0] == "cancel_shipment"
    assert set(steps) == {"track_shipment", "cancel_shipment", "refund_order", "send_email"}
    assert "send_email" not in whole  # the last step's tool: the whole list has an address tool
    assert len(steps) == len(set(steps)) == 4


def test_a_short_request_of_two_sentences_is_ranked_whole(
    service: ServiceProcess, off: ServiceProcess
) -> None:
    assert len(SHORT) < 250
    assert search(service, SHORT) == search(off, SHORT)
