"""The test/benchmark helper that runs the service leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.support import start_service, wait_until


def group(pgid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-g", str(pgid)], check=False, capture_output=True, text=True)
    out = found.stdout
    return [int(p) for p in out.split()]


def test_stop_kills_a_worker_that_ignores_sigterm(tmp_path: Path) -> None:
    service = start_service(tmp_path, {"TOOL_SELECTOR_ENCODER": "none"}, wait_ready=False)
    workers = [p for p in group(service.proc.pid) if p != service.proc.pid]
    assert workers  # granian serves from a forked worker
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)  # cannot act on SIGTERM now
    service.stop(timeout=1)
    wait_until(lambda: group(service.proc.pid) == [], 5, "the worker gone")
