"""Idle OpenBLAS threads spin: the service caps BLAS at ``blas_threads`` when it loads.

Each case runs in a fresh interpreter: the thread count is process-wide state.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import SERVICE_DIR

SCRIPT = """
import sys
from litestar.testing import TestClient
from threadpoolctl import threadpool_info
from tool_selector.http.app import create_app
from tool_selector.settings import Settings

def blas():
    return sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})

before = blas()
app = create_app(Settings(encoder="none", blas_threads=int(sys.argv[1])))
with TestClient(app) as client:
    assert app.state.runtime.ready.wait(30)
    assert client.get("/readyz").status_code == 200
    print(before, blas())
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="OpenBLAS runs 1 thread on 1 CPU")
@pytest.mark.parametrize(("setting", "expected"), [(1, "[1]"), (0, "[2]")], ids=["capped", "left"])
def test_loading_the_app_sets_the_blas_thread_count(setting: int, expected: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(SERVICE_DIR), "OPENBLAS_NUM_THREADS": "2"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(setting)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[2]", expected]
