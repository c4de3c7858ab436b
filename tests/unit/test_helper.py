"""The helper thread (``pipeline.helper``): one request at a time, and idle once left."""

from __future__ import annotations

import threading
import time

import pytest

from tool_selector.pipeline.helper import Helper, side_by_side


def test_one_request_at_a_time_takes_the_helper() -> None:
    helper = Helper()
    assert helper.take() is not None
    assert helper.take() is None  # another request is encoding
    assert helper.enter() is None  # counted, encodes in its own thread
    helper.leave()
    helper.leave()
    assert helper.enter() is not None
    helper.leave()


def test_the_rest_is_waited_for_when_the_first_fails() -> None:
    """A request whose own encode fails leaves the helper idle: what it handed over is done
    before it returns (else the next request's work would queue behind it)."""
    helper = Helper()
    pool = helper.take()
    started, done = threading.Event(), []

    def rest() -> int:
        started.set()
        time.sleep(0.05)
        done.append(threading.current_thread().name)
        return 1

    def first() -> int:
        started.wait(5)
        raise ValueError("the first model failed")

    with pytest.raises(ValueError, match="first model failed"):
        side_by_side(pool, first, [rest])
    assert done == ["query-encode_0"]


def test_without_a_helper_or_with_one_shut_down_all_runs_here() -> None:
    here = threading.current_thread().name
    seen: list[str] = []

    def job(n: int) -> int:
        seen.append(threading.current_thread().name)
        return n

    assert side_by_side(None, lambda: job(1), [lambda: job(2)]) == (1, [2])
    pool = Helper().take()
    assert pool is not None
    pool.shutdown()
    assert side_by_side(pool, lambda: job(1), [lambda: job(2), lambda: job(3)]) == (1, [2, 3])
    assert seen == [here] * 5
