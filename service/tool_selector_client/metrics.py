"""Client-side Prometheus metrics (optional: needs ``prometheus-client``).

``prometheus_client`` is imported when ``ClientMetrics`` is built, never at package import,
so the client works without it; the registry is always the caller's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tool_selector_client.core import Selection

__all__ = ["ClientMetrics", "MissingDependencyError"]

#: Selector call latency buckets, dense around the proxy's 150 ms budget.
LATENCY_BUCKETS = (
    0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075,
    0.1, 0.125, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0,
)  # fmt: skip
TOOL_BUCKETS = (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)
#: Outcomes decided before any request is sent: their latency is not the service's.
_NO_CALL = frozenset({"disabled", "empty_pattern", "circuit_open"})


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message says how to get it."""


class ClientMetrics:
    """The client's metrics, declared on ``registry`` (a ``prometheus_client`` registry)."""

    def __init__(self, registry: Any) -> None:
        try:
            from prometheus_client import Counter, Histogram  # noqa: PLC0415
        except ImportError as exc:
            raise MissingDependencyError(
                "client metrics need prometheus-client: pip install prometheus-client"
            ) from exc
        self.latency = Histogram(
            "tool_selector_client_request_duration_seconds",
            "Selector call latency seen by the client, by outcome.",
            ["outcome"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.outcomes = Counter(
            "tool_selector_client_outcomes_total",
            "Client decisions by rollout mode and outcome (ok or the fail-open reason).",
            ["mode", "outcome"],
            registry=registry,
        )
        self.reinjected = Histogram(
            "tool_selector_client_tools_reinjected",
            "Tools handed back to the model per decision, by rollout mode.",
            ["mode"],
            buckets=TOOL_BUCKETS,
            registry=registry,
        )
        self.shadow_top1 = Counter(
            "tool_selector_client_shadow_top1_total",
            "Shadow decisions by whether our first pick equals relevance's "
            "(agree, disagree, not_comparable).",
            ["result"],
            registry=registry,
        )

    def count(self, mode: str, returned: int, selection: Selection | None = None) -> None:
        """One decision in ``mode``: its outcome (``disabled`` when nothing was selected), the
        tools handed back, and the call's latency when one was made."""
        outcome = "disabled" if selection is None else selection.outcome
        self.outcomes.labels(mode, outcome).inc()
        self.reinjected.labels(mode).observe(returned)
        if selection is not None and outcome not in _NO_CALL:
            self.latency.labels(outcome).observe(selection.latency_s)
