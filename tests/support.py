"""Test helpers: free ports, a real service process on loopback, a real redis-server."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
SERVICE_DIR = ROOT / "service"
#: The six public bench sets sliced for the suite (``offline.evaluation.bench_slice``).
BENCH_SLICE = ROOT / "tests" / "fixtures" / "bench"
#: A small catalog of the usual shapes of names (plain, ``mcp__x__y``, ``x.y``).
SAMPLE_TOOLS: list[dict[str, str]] = [
    {"name": "read_file", "description": "Read a file from the local disk"},
    {"name": "mcp__slack__send_message", "description": "Post a message to a Slack channel"},
    {"name": "mcp__github__create_issue", "description": "Open a new issue in a GitHub repository"},
    {"name": "get_weather", "description": "Current weather forecast for a city"},
    {"name": "calendar.create_event", "description": "Schedule a meeting on the calendar"},
]


def static_table() -> Path:
    """The static embedding table the suite uses: ``TOOL_SELECTOR_STATIC_MODEL_PATH``, else
    where ``make install`` builds it; built there first if missing (about 3 minutes, once)."""
    from tool_selector.embeddings import distill  # noqa: PLC0415
    from tool_selector.embeddings.static import default_static_path  # noqa: PLC0415

    folder = Path(os.environ.get("TOOL_SELECTOR_STATIC_MODEL_PATH") or default_static_path())
    if not distill.is_current(folder):
        distill.distill(folder)
    return folder


def second_static_table() -> Path:
    """bge-small-en-v1.5's static table: ``TOOL_SELECTOR_SECOND_STATIC_MODEL_PATH``, else
    where ``make install`` builds it; built there first if missing (about 30 s, once)."""
    from tool_selector.embeddings import distill  # noqa: PLC0415
    from tool_selector.embeddings.models import BGE_SMALL  # noqa: PLC0415
    from tool_selector.embeddings.static import default_static_path  # noqa: PLC0415

    folder = Path(
        os.environ.get("TOOL_SELECTOR_SECOND_STATIC_MODEL_PATH")
        or default_static_path(BGE_SMALL.name)
    )
    if not distill.is_current(folder, BGE_SMALL.name, BGE_SMALL.weights_digest):
        distill.distill_onnx(folder, BGE_SMALL)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_until(check: Callable[[], T], timeout: float, what: str) -> T:
    """Call ``check`` until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


@dataclass
class ServiceProcess:
    """``tool-selector serve`` (granian) running in a child process on loopback."""

    proc: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def searches(self) -> list[dict[str, Any]]:
        """The search log lines written so far, parsed."""
        return self.events("search")

    def events(self, event: str) -> list[dict[str, Any]]:
        """The log lines of ``event`` written so far, parsed. Lines end at ``\n`` only: a tool
        name may hold U+2028 or U+0085, which ``str.splitlines`` would cut a record at."""
        records = []
        for line in self.log().split("\n"):
            start = line.find("{")
            if start >= 0 and f'"event":"{event}"' in line:
                records.append(json.loads(line[start:]))
        return records

    def stop(self, timeout: float = 10) -> int:
        """SIGTERM, then SIGKILL after ``timeout``; the whole process group either way.

        granian serves from a forked worker: killing only the main process would leave that
        worker running (seen: a naive-baseline worker still busy with its backlog, minutes
        after the benchmark ended).
        """
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own group: start_new_session
        return self.proc.returncode


def start_service(
    tmp_dir: Path,
    env: Mapping[str, str] | None = None,
    *,
    args: tuple[str, ...] = (),
    wait_ready: bool = True,
    scheme: str = "http",
    timeout: float = 120,
    deadline: float | None = 60.0,
) -> ServiceProcess:
    """Start the real service (granian, app factory) on a free loopback port. ``deadline``:
    its request deadline (``None``: the service's own, 2 s): a test asserts no pace, and on
    a loaded CI machine a long paste's first answer took more than 2 s (a 503
    ``deadline_exceeded``); ``env`` still overrides it (``test_guard`` does)."""
    port = free_port()
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_SELECTOR_")}
    child_env["PYTHONPATH"] = str(SERVICE_DIR)
    child_env["TOOL_SELECTOR_LEARN_DIR"] = str(tmp_dir / "learn")  # each service its own
    if deadline is not None:  # no pace asserted in a test: see the parameter
        child_env["TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS"] = str(deadline)
    child_env.update(env or {})
    if child_env.get("TOOL_SELECTOR_ENCODER") != "none":
        child_env.setdefault("TOOL_SELECTOR_STATIC_MODEL_PATH", str(static_table()))
        child_env.setdefault("TOOL_SELECTOR_SECOND_STATIC_MODEL_PATH", str(second_static_table()))
    log_path = tmp_dir / f"service-{port}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tool_selector",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                *args,
            ],
            env=child_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
    service = ServiceProcess(proc=proc, url=f"{scheme}://127.0.0.1:{port}", log_path=log_path)
    if scheme == "http":
        path = "/readyz" if wait_ready else "/healthz"
        try:
            wait_until(
                lambda: proc.poll() is not None or _ok(service.url + path),
                timeout,
                f"service {path}",
            )
        except TimeoutError:
            service.stop()
            raise
        if proc.poll() is not None:
            raise RuntimeError(f"service exited early:\n{service.log()}")
    return service


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class RedisProcess:
    """A throwaway ``redis-server`` on a free loopback port (never the machine's 6379)."""

    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def start_redis(
    tmp_dir: Path, port: int | None = None, *, persistent: bool = False
) -> RedisProcess:
    """A redis-server keeping its data in ``tmp_dir``: a cache's (nothing on disk) or, with
    ``persistent``, the learning store's as deployed (append-only file fsynced every
    second, no eviction: ``deploy/k8s/components/learn-redis``), which a restart on the same
    folder reads back."""
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    port = port or free_port()
    proc = subprocess.Popen(
        [
            exe,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes" if persistent else "no",
            "--appendfsync",
            "everysec",
            "--maxmemory-policy",
            "noeviction",
            "--dir",
            str(tmp_dir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def up() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    wait_until(up, 10, "redis-server")
    return RedisProcess(proc=proc, port=port)


def warm_catalog(
    url: str, tools: object, timeout: float = 120, headers: Mapping[str, str] | None = None
) -> None:
    """Send ``tools`` until every encoder has embedded them (``X-Tool-Selector-Embedded:
    complete``, on the hybrid path).

    A cold catalog's first answers come from the static arm while it is embedded in the
    background, then from the first model alone while the second embeds it (``partial``);
    tests about hybrid ranking warm their catalog first.
    """
    body = {"pattern": "warm up", "tools": tools}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = httpx.post(
            url + "/v1/tool-discovery/search", json=body, timeout=60, headers=dict(headers or {})
        )
        if r.status_code == 200 and r.headers["x-tool-selector-embedded"] == "complete":
            return
        time.sleep(0.2)
    raise TimeoutError("catalog never answered with every encoder's vectors")
