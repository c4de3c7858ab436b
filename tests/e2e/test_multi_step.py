"""A two-step task over HTTP: each step gets its tool, and the first tool stays first
(a service with ``TOOL_SELECTOR_MULTI_STEP`` on, against the default one, with it off)."""

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
TASK = (
    "Create a shipment of perishable food from Emma Smith to Daniel at 456 Elm Avenue. "
    "Then issue a refund for order ord123456."
)


@pytest.fixture(scope="module")
def by_steps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """The real service with multi-step ranking on (and no multilingual arm: English only)."""
    env = {"TOOL_SELECTOR_MULTI_STEP": "true", "TOOL_SELECTOR_MULTILINGUAL": "false"}
    proc = start_service(tmp_path_factory.mktemp("steps"), env)
    yield proc
    proc.stop()


def search(service: ServiceProcess) -> list[str]:
    warm_catalog(service.url, TOOLS)
    body = {"pattern": TASK, "tools": TOOLS, "top_k": 2}
    r = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=30)
    assert r.status_code == 200, r.text
    names: list[str] = r.json()["selected_names"]
    return names


def test_a_two_step_task_gets_a_tool_for_each_step(
    service: ServiceProcess, by_steps: ServiceProcess
) -> None:
    steps, whole = search(by_steps), search(service)
    assert steps[0] == whole[0] == "refund_order"
    assert "create_shipment" in steps
    assert "create_shipment" not in whole  # the whole task's list: its refund step's neighbours
    assert len(steps) == len(set(steps)) == 2
