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
from typing import Any, Generic, Literal, TypeVar

from tool_selector_client.capture import CaptureWriter
from tool_selector_client.client import AsyncSelectorClient, SelectorClient
from tool_selector_client.compare import agreement
from tool_selector_client.core import Selection, clamp_top_k, listed
from tool_selector_client.definitions import described
from tool_selector_client.metrics import ClientMetrics
from tool_selector_client.relevance import relevance_select

__all__ = ["AsyncRollout", "Decision", "Mode", "Rollout", "in_sample"]

Mode = Literal["off", "dark", "shadow", "enforce"]
MODES: tuple[Mode, ...] = ("off", "dark", "shadow", "enforce")
_NO_CALL = frozenset({"disabled", "empty_pattern", "circuit_open"})
ClientT = TypeVar("ClientT", SelectorClient, AsyncSelectorClient)


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

    def unchanged(self, tools: list[Any], current: list[Any] | None) -> Decision:
        return Decision(tools=tools if current is None else current, mode=self.mode, sampled=False)

    def skip(self, tools: list[Any], current: list[Any] | None) -> Decision:
        decision = self.unchanged(tools, current)
        self._count("disabled", len(decision.tools))
        return decision

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
        limit = clamp_top_k(top_k, self.max_search_results)
        relevance: tuple[str, ...] | None = None
        if self.mode == "shadow":
            relevance = tuple(relevance_select(pattern, described(tools), limit))
            self._agree(selection, relevance, always_keep)
        if self.mode == "enforce":
            out, applied = selection.tools, selection.ok
        else:
            out, applied = list(tools if current is None else current), False
        self._count(selection.outcome, len(out), selection)
        decision = Decision(out, self.mode, True, selection, relevance, applied)
        if self.capture is not None:
            self._capture(
                self.capture,
                decision,
                selection,
                pattern=pattern,
                tools=tools,
                session_id=session_id,
                top_k=limit,
                always_keep=always_keep,
            )
        return decision

    def _capture(
        self,
        capture: CaptureWriter,
        decision: Decision,
        selection: Selection,
        *,
        pattern: str,
        tools: Sequence[Any],
        session_id: str | None,
        top_k: int,
        always_keep: Sequence[str],
    ) -> None:
        """One decision in the capture file."""
        relevance = decision.relevance
        capture.record(
            pattern,
            list(tools),
            session_id,
            mode=self.mode,
            top_k=top_k,
            always_keep=list(always_keep),
            selected=list(selection.names),
            relevance=None if relevance is None else list(relevance),
            latency_ms=round(selection.latency_s * 1000, 3),
            outcome=selection.outcome,
            status=selection.status,
            applied=decision.applied,
            returned=len(decision.tools),
        )

    def _agree(
        self, selection: Selection, relevance: tuple[str, ...], always_keep: Sequence[str]
    ) -> None:
        """Count whether the service and the relevance scorer picked the same tool first."""
        if self.metrics is None:
            return
        agree = agreement(selection.names, relevance, always_keep)
        result = "not_comparable" if agree.top1 is None else ("agree" if agree.top1 else "disagree")
        self.metrics.shadow_top1.labels(result).inc()

    def _count(self, outcome: str, returned: int, selection: Selection | None = None) -> None:
        if self.metrics is None:
            return
        self.metrics.outcomes.labels(self.mode, outcome).inc()
        self.metrics.reinjected.labels(self.mode).observe(returned)
        if selection is not None and outcome not in _NO_CALL:
            self.metrics.latency.labels(outcome).observe(selection.latency_s)


class _Wrapper(Generic[ClientT]):
    def __init__(
        self,
        client: ClientT,
        mode: Mode = "dark",
        *,
        sample_percent: float = 100.0,
        capture: CaptureWriter | None = None,
        metrics: ClientMetrics | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client: ClientT = client
        self.policy = _Policy(
            mode,
            sample_percent=sample_percent,
            capture=capture,
            metrics=metrics,
            rng=rng,
            max_search_results=client.max_search_results,
        )


class Rollout(_Wrapper[SelectorClient]):
    """Wraps a ``SelectorClient`` in a rollout mode. ``search`` never raises."""

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
        tools, keep = listed(tools), listed(always_keep)
        current = None if current is None else listed(current)
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
            return self.policy.unchanged(tools, current)


class AsyncRollout(_Wrapper[AsyncSelectorClient]):
    """Wraps an ``AsyncSelectorClient`` in a rollout mode. ``search`` never raises."""

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
        tools, keep = listed(tools), listed(always_keep)
        current = None if current is None else listed(current)
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
            return self.policy.unchanged(tools, current)
