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


@dataclass(frozen=True, slots=True)
class _Search:
    """One rollout search as the caller passed it, each iterable read once."""

    pattern: str
    tools: list[Any]
    top_k: int | None
    always_keep: list[str]
    session_id: str | None
    current: list[Any] | None

    @property
    def request(self) -> tuple[str, list[Any], int | None, list[str]]:
        """The client's ``select`` arguments for this search."""
        return self.pattern, self.tools, self.top_k, self.always_keep

    @property
    def unchanged(self) -> list[Any]:
        """What the caller would hand back without us."""
        return self.tools if self.current is None else self.current


class _Policy:
    """Mode logic shared by the sync and async rollouts (no I/O besides capture): ``start``
    before the client's ``select``, ``decide`` after it; neither raises."""

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

    def start(
        self,
        pattern: str,
        tools: Sequence[Any],
        top_k: int | None,
        always_keep: Iterable[str],
        *,
        session_id: str | None,
        current: Sequence[Any] | None,
    ) -> _Search | Decision:
        """The search to send, or the decision already made: the caller's tools unchanged
        when the request takes no part (counted as ``disabled``) or anything goes wrong."""
        search = _Search(
            pattern,
            listed(tools),
            top_k,
            listed(always_keep),
            session_id,
            None if current is None else listed(current),
        )
        try:
            if self.mode != "off" and in_sample(self.sample_percent, session_id, self.rng):
                return search
            decision = self._unchanged(search)
            self._count(len(decision.tools))
            return decision
        except Exception:  # the rollout must never break the proxy
            return self._unchanged(search)

    def decide(self, search: _Search, selection: Selection | Exception) -> Decision:
        """The decision for the client's ``selection``, recorded; a call that raised, or
        anything going wrong here, leaves the caller's tools unchanged."""
        if isinstance(selection, Exception):
            return self._unchanged(search)
        try:
            return self._decide(search, selection)
        except Exception:  # the rollout must never break the proxy
            return self._unchanged(search)

    def _unchanged(self, search: _Search) -> Decision:
        return Decision(tools=search.unchanged, mode=self.mode, sampled=False)

    def _decide(self, search: _Search, selection: Selection) -> Decision:
        limit = clamp_top_k(search.top_k, self.max_search_results)
        relevance: tuple[str, ...] | None = None
        if self.mode == "shadow":
            relevance = tuple(relevance_select(search.pattern, described(search.tools), limit))
            self._agree(selection, relevance, search.always_keep)
        if self.mode == "enforce":
            out, applied = selection.tools, selection.ok
        else:
            out, applied = list(search.unchanged), False
        self._count(len(out), selection)
        decision = Decision(out, self.mode, True, selection, relevance, applied)
        if self.capture is not None:
            self._capture(self.capture, search, selection, decision, limit)
        return decision

    def _capture(
        self,
        capture: CaptureWriter,
        search: _Search,
        selection: Selection,
        decision: Decision,
        top_k: int,
    ) -> None:
        """One decision in the capture file."""
        relevance = decision.relevance
        capture.record(
            search.pattern,
            list(search.tools),
            search.session_id,
            mode=self.mode,
            top_k=top_k,
            always_keep=list(search.always_keep),
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

    def _count(self, returned: int, selection: Selection | None = None) -> None:
        if self.metrics is not None:
            self.metrics.count(self.mode, returned, selection)


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
        search = self.policy.start(
            pattern, tools, top_k, always_keep, session_id=session_id, current=current
        )
        if isinstance(search, Decision):
            return search
        try:
            selection: Selection | Exception = self.client.select(*search.request)
        except Exception as exc:  # the rollout must never break the proxy
            selection = exc
        return self.policy.decide(search, selection)


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
        search = self.policy.start(
            pattern, tools, top_k, always_keep, session_id=session_id, current=current
        )
        if isinstance(search, Decision):
            return search
        try:
            selection: Selection | Exception = await self.client.select(*search.request)
        except Exception as exc:  # the rollout must never break the proxy
            selection = exc
        return self.policy.decide(search, selection)
