"""Every metric the service, its shadow compare and the client declare is documented."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from tests.support import ROOT
from tool_selector.metrics import Metrics, ShadowMetrics
from tool_selector_client.metrics import ClientMetrics


def _declared() -> list[str]:
    registry = CollectorRegistry()
    Metrics(registry)
    ShadowMetrics(registry)
    ClientMetrics(registry)
    return sorted(f.name for f in registry.collect())


@pytest.mark.parametrize("name", _declared())
def test_metric_is_documented(name: str) -> None:
    assert f"`{name}" in (ROOT / "docs" / "operations.md").read_text()


@pytest.mark.parametrize("name", _declared())
def test_metric_name_is_prefixed(name: str) -> None:
    assert name.startswith("tool_selector_")
