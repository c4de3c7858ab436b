"""The client package imports with httpx + msgspec only (no server dependencies)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import SERVICE_DIR

BLOCKED = (
    "litestar",
    "numpy",
    "torch",
    "bm25s",
    "sentence_transformers",
    "prometheus_client",
    "redis",
    "granian",
    "tool_selector",
)
PROBE = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
import tool_selector_client
from tool_selector_client import SelectorClient, Rollout, CaptureWriter
with SelectorClient("http://127.0.0.1:9", timeout_s=0.2) as c:
    s = c.select("read", [{{"name": "read_file"}}])
try:
    tool_selector_client.ClientMetrics(None)
except tool_selector_client.MissingDependencyError as exc:
    print("hint:", exc)
print(s.reason)
"""


def test_client_imports_and_fails_open_without_server_packages() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={"PYTHONPATH": str(SERVICE_DIR)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out == [
        "hint: client metrics need prometheus-client: pip install prometheus-client",
        "connect_error",
    ]
