"""The test/benchmark helper that runs the service leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.support import start_service, wait_until


def group(pgid: int) -> list[int]:
    """Live processes of the group (zombies waiting to be reaped do not count)."""
    found = subprocess.run(
        ["ps", "-o", "pid=,stat=", "-g", str(pgid)], check=False, capture_output=True, text=True
    )
    rows = [line.split() for line in found.stdout.splitlines() if line.strip()]
    return [int(pid) for pid, stat in rows if not stat.startswith("Z")]


def test_stop_kills_a_worker_that_ignores_sigterm(tmp_path: Path) -> None:
    service = start_service(tmp_path, {"TOOL_SELECTOR_ENCODER": "none"}, wait_ready=False)
    workers = [p for p in group(service.proc.pid) if p != service.proc.pid]
    assert workers  # granian serves from a forked worker
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)  # cannot act on SIGTERM now
    service.stop(timeout=1)
    wait_until(lambda: group(service.proc.pid) == [], 5, "the worker gone")
