"""Rollout modes around the client: off, dark, shadow, enforce, with sticky sampling.

- ``off``: no call; the caller's current tools are returned.
- ``dark``: call the service, record the decision, return the caller's tools unchanged.
- ``shadow``: like ``dark``, and also compute the proxy's local ``relevance`` picks and
  record how far they agree with ours.
- ``enforce``: use our picks; any failure fails open to every deferred tool.

``sample_percent`` sends only part of the traffic through the mode; the rest behaves as
``off``. With a ``session_id`` the choice is sticky (a hash of the id picks the bucket), so
one conversation never flips between behaviours.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tool_selector_client.capture import CaptureWriter
from tool_selector_client.client import AsyncSelectorClient, SelectorClient
from tool_selector_client.compare import agreement
from tool_selector_client.core import Selection
from tool_selector_client.definitions import expand, tool_description, tool_name
from tool_selector_client.metrics import ClientMetrics
from tool_selector_client.relevance import relevance_select

__all__ = ["AsyncRollout", "Decision", "Mode", "Rollout", "in_sample"]

Mode = Literal["off", "dark", "shadow", "enforce"]
MODES: tuple[Mode, ...] = ("off", "dark", "shadow", "enforce")
_NO_CALL = frozenset({"disabled", "empty_pattern", "circuit_open"})


@dataclass(frozen=True, slots=True)
class Decision:
    """What the caller should do with one search, and what we learned.

    ``tools`` is the list to hand the model. ``sampled`` is False when the request did not
    take part (mode ``off`` or sampled out); ``applied`` is True only when our picks are used.
    """

    tools: list[Any]
    mode: Mode
    sampled: bool
    selection: Selection | None = None
    relevance: tuple[str, ...] | None = None
    applied: bool = False


def in_sample(percent: float, session_id: str | None, rng: Callable[[], float]) -> bool:
    """Whether a request takes part: sticky per ``session_id``, random without one."""
    if percent >= 100:
        return True
    if percent <= 0:
        return False
    if session_id:
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:4], "big") % 10_000 < percent * 100
    return rng() * 100 < percent


class _Policy:
    """Mode logic shared by the sync and async rollouts (no I/O besides capture)."""

    def __init__(
        self,
        mode: Mode,
        *,
        sample_percent: float,
        capture: CaptureWriter | None,
        metrics: ClientMetrics | None,
        rng: Callable[[], float],
        max_search_results: int,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode: Mode = mode
        self.sample_percent = sample_percent
        self.capture = capture
        self.metrics = metrics
        self.rng = rng
        self.max_search_results = max_search_results

    def takes_part(self, session_id: str | None) -> bool:
        return self.mode != "off" and in_sample(self.sample_percent, session_id, self.rng)

    def skip(self, tools: Sequence[Any], current: Sequence[Any] | None) -> Decision:
        out = list(tools if current is None else current)
        self._count("disabled", len(out))
        return Decision(tools=out, mode=self.mode, sampled=False)

    def decide(
        self,
        selection: Selection,
        *,
        pattern: str,
        tools: Sequence[Any],
        top_k: int | None,
        always_keep: Sequence[str],
        session_id: str | None,
        current: Sequence[Any] | None,
    ) -> Decision:
        limit = min(top_k or self.max_search_results, self.max_search_results)
        relevance: tuple[str, ...] | None = None
        if self.mode == "shadow":
            pairs = [(n, tool_description(d)) for d in expand(tools) if (n := tool_name(d))]
            relevance = tuple(relevance_select(pattern, pairs, limit))
        if self.mode == "enforce":
            out, applied = selection.tools, selection.ok
        else:
            out, applied = list(tools if current is None else current), False
        self._count(selection.outcome, len(out), selection)
        if relevance is not None and self.metrics is not None:
            agree = agreement(selection.names, relevance, always_keep)
            result = (
                "not_comparable" if agree.top1 is None else ("agree" if agree.top1 else "disagree")
            )
            self.metrics.shadow_top1.labels(result).inc()
        if self.capture is not None:
            self.capture.record(
                pattern,
                list(tools),
                session_id,
                mode=self.mode,
                top_k=limit,
                always_keep=list(always_keep),
                selected=list(selection.names),
                relevance=None if relevance is None else list(relevance),
                latency_ms=round(selection.latency_s * 1000, 3),
                outcome=selection.outcome,
                status=selection.status,
                applied=applied,
                returned=len(out),
            )
        return Decision(
            tools=out,
            mode=self.mode,
            sampled=True,
            selection=selection,
            relevance=relevance,
            applied=applied,
        )

    def _count(self, outcome: str, returned: int, selection: Selection | None = None) -> None:
        if self.metrics is None:
            return
        self.metrics.outcomes.labels(self.mode, outcome).inc()
        self.metrics.reinjected.labels(self.mode).observe(returned)
        if selection is not None and outcome not in _NO_CALL:
            self.metrics.latency.labels(outcome).observe(selection.latency_s)


class Rollout:
    """Wraps a ``SelectorClient`` in a rollout mode. ``search`` never raises."""

    def __init__(
        self,
        client: SelectorClient,
        mode: Mode = "dark",
        *,
        sample_percent: float = 100.0,
        capture: CaptureWriter | None = None,
        metrics: ClientMetrics | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.policy = _Policy(
            mode,
            sample_percent=sample_percent,
            capture=capture,
            metrics=metrics,
            rng=rng,
            max_search_results=client.max_search_results,
        )

    def search(
        self,
        pattern: str,
        tools: Sequence[Any],
        *,
        top_k: int | None = None,
        always_keep: Iterable[str] = (),
        session_id: str | None = None,
        current: Sequence[Any] | None = None,
    ) -> Decision:
        """Decide which tools to hand back for one ``gateway_search_tools`` call.

        ``current`` is what the caller would hand back without us (default: ``tools``).
        """
        keep = list(always_keep)
        try:
            if not self.policy.takes_part(session_id):
                return self.policy.skip(tools, current)
            selection = self.client.select(pattern, tools, top_k, keep)
            return self.policy.decide(
                selection,
                pattern=pattern,
                tools=tools,
                top_k=top_k,
                always_keep=keep,
                session_id=session_id,
                current=current,
            )
        except Exception:  # the rollout must never break the proxy
            return Decision(
                tools=list(tools if current is None else current),
                mode=self.policy.mode,
                sampled=False,
            )


class AsyncRollout:
    """Wraps an ``AsyncSelectorClient`` in a rollout mode. ``search`` never raises."""

    def __init__(
        self,
        client: AsyncSelectorClient,
        mode: Mode = "dark",
        *,
        sample_percent: float = 100.0,
        capture: CaptureWriter | None = None,
        metrics: ClientMetrics | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.policy = _Policy(
            mode,
            sample_percent=sample_percent,
            capture=capture,
            metrics=metrics,
            rng=rng,
            max_search_results=client.max_search_results,
        )

    async def search(
        self,
        pattern: str,
        tools: Sequence[Any],
        *,
        top_k: int | None = None,
        always_keep: Iterable[str] = (),
        session_id: str | None = None,
        current: Sequence[Any] | None = None,
    ) -> Decision:
        """Async ``Rollout.search``."""
        keep = list(always_keep)
        try:
            if not self.policy.takes_part(session_id):
                return self.policy.skip(tools, current)
            selection = await self.client.select(pattern, tools, top_k, keep)
            return self.policy.decide(
                selection,
                pattern=pattern,
                tools=tools,
                top_k=top_k,
                always_keep=keep,
                session_id=session_id,
                current=current,
            )
        except Exception:
            return Decision(
                tools=list(tools if current is None else current),
                mode=self.policy.mode,
                sampled=False,
            )
