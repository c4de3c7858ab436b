"""Checkpoints in long loops: work whose request was abandoned stops at the next one.

A search or a catalog report runs on a worker thread (``http.workers``). When its request is
abandoned (its deadline passed, its caller gone) the thread cannot be stopped from outside:
left alone it computes to the end, holding a worker slot and the GIL every other request
needs (two searches with 256 long filter globs each held both workers for 20 s: every other
search meanwhile a 503). So a loop whose length the request sets (the tools a filter reads,
the lines and sentences of a message, a catalog report's tools) calls ``checkpoint()`` every
so often, and the worker pool sets, for the work it runs (``checked``), a check that raises
once the request is abandoned. Outside a worker (the CLI, the eval, the tests) a checkpoint
does nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

_LOCAL = threading.local()


def checkpoint() -> None:
    """Raise (the worker's check's error) when this thread's request was abandoned."""
    check: Callable[[], None] | None = getattr(_LOCAL, "check", None)
    if check is not None:
        check()


@contextlib.contextmanager
def checked(check: Callable[[], None]) -> Iterator[None]:
    """``check`` as this thread's checkpoint while the block runs."""
    before = getattr(_LOCAL, "check", None)
    _LOCAL.check = check
    try:
        yield
    finally:
        _LOCAL.check = before
