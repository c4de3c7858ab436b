"""The client's circuit breaker."""

from __future__ import annotations

from tool_selector_client.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_threshold_failures() -> None:
    breaker = CircuitBreaker(threshold=2, cooldown_s=10, clock=Clock())
    breaker.record(False)
    assert breaker.allow()
    breaker.record(False)
    assert (breaker.allow(), breaker.state) == (False, "open")


def test_success_resets_the_count() -> None:
    breaker = CircuitBreaker(threshold=2, clock=Clock())
    for healthy in (False, True, False):
        breaker.record(healthy)
    assert breaker.state == "closed"


def test_half_open_allows_one_probe_then_closes_on_success() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=clock)
    breaker.record(False)
    clock.now = 11
    assert (breaker.allow(), breaker.allow()) == (True, False)
    breaker.record(True)
    assert breaker.state == "closed"


def test_failed_probe_reopens() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown_s=10, clock=clock)
    for _ in range(3):
        breaker.record(False)
    clock.now = 11
    assert breaker.allow()
    breaker.record(False)
    assert breaker.state == "open"


def test_zero_threshold_never_opens() -> None:
    breaker = CircuitBreaker(threshold=0, clock=Clock())
    for _ in range(10):
        breaker.record(False)
    assert breaker.allow()
