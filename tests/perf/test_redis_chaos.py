"""Chaos: under steady load, the shared Redis tier is hung (SIGSTOP), then killed, then
restarted empty (``loadtests.chaos``). Every request must still be answered, in every phase;
the breaker must open and close again; Redis hits must come back once the tier is refilled.

The service runs with no in-process tiers (memory cache and catalog reuse off), so every
request goes to Redis and its faults are on the request path. How fast the answers came and
how well the load kept its pace depend on the machine: ``python -m loadtests.chaos`` prints
them, this test asserts none of them."""

from __future__ import annotations

import pytest
from loadtests.chaos import ChaosRun, run


@pytest.fixture(scope="module")
def chaos(tmp_path_factory: pytest.TempPathFactory) -> ChaosRun:
    return run(tmp_path_factory.mktemp("chaos"))


def test_no_request_is_lost_in_any_phase(chaos: ChaosRun) -> None:
    print(f"chaos: {chaos.summary()}")  # noqa: T201 - shown with -s or on failure
    sent = {name: len(results) for name, results in chaos.phases.items()}
    assert all(sent.values()), sent
    assert chaos.failed == 0


def test_answers_come_from_the_shared_tier_before_and_after(chaos: ChaosRun) -> None:
    """Hybrid answers (tool vectors read from Redis) before the fault and after the restart;
    in between, and whenever a loaded machine makes a read miss its 30 ms timeout, an answer
    may be lexical, which is still an answer."""
    paths = [{r[3] for r in chaos.phases[p]} for p in ("healthy", "restarted")]
    assert ["hybrid" in p for p in paths] == [True, True]


def test_the_breaker_opens_while_hung_and_closes_after_the_restart(chaos: ChaosRun) -> None:
    seen = (chaos.open_while_hung, chaos.opened >= 1, chaos.closed >= 1, chaos.open_at_end)
    assert seen == (1, True, True, 0)


def test_redis_hits_resume_from_the_refilled_tier(chaos: ChaosRun) -> None:
    assert chaos.hits_after > chaos.hits_before
