"""``tool-selector serve`` that cannot start says why in one line on stderr and exits 2.

The real command in a child process, as ``make run`` starts it: a port already held, a bad
setting, a model file missing or altered. Each refusal comes before granian starts, so no
test here waits for a server; a check that let one start would hit the timeout and fail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT, SERVICE_DIR, free_port
from tool_selector.embeddings.models import BGE_SMALL, default_model_dir

#: Far above a refusal (about a second); only a server that started by mistake reaches it.
TIMEOUT = 60


@dataclass
class Refusal:
    returncode: int
    lines: list[str]  # stderr's non-empty lines


def serve(tmp_path: Path, env: Mapping[str, str], *args: str) -> Refusal:
    """Run ``python -m tool_selector serve`` to its end; its exit status and stderr lines."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_SELECTOR_")}
    child_env |= {"PYTHONPATH": str(SERVICE_DIR), "TOOL_SELECTOR_LEARN_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "tool_selector", "serve", *args]
    proc = subprocess.Popen(
        command,
        env=child_env | dict(env),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # granian's worker too
        proc.communicate()
        pytest.fail(f"serve {' '.join(args)} did not refuse to start: it served")
    return Refusal(proc.returncode, [line for line in stderr.splitlines() if line.strip()])


@contextlib.contextmanager
def held_port(reuse_port: bool) -> Iterator[int]:
    """A loopback port a listening socket holds: a plain program's, or one bound with
    granian's options (``SO_REUSEPORT``, ``SO_REUSEADDR``) as another ``serve`` holds it."""
    with socket.socket() as holder:
        if reuse_port:
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", free_port()))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("reuse_port", [False, True], ids=["a-program", "another-serve"])
def test_a_port_in_use_is_one_line_naming_it(tmp_path: Path, reuse_port: bool) -> None:
    with held_port(reuse_port) as port:
        refusal = serve(tmp_path, {"TOOL_SELECTOR_ENCODER": "none"}, "--port", str(port))
    assert refusal.returncode == 2
    assert len(refusal.lines) == 1, refusal.lines
    assert f"port {port} on 127.0.0.1 is in use" in refusal.lines[0]
    assert "--port" in refusal.lines[0]


def test_the_port_setting_is_checked_as_the_flag_is(tmp_path: Path) -> None:
    with held_port(reuse_port=True) as port:
        env = {"TOOL_SELECTOR_ENCODER": "none", "TOOL_SELECTOR_PORT": str(port)}
        refusal = serve(tmp_path, env)
    assert (refusal.returncode, len(refusal.lines)) == (2, 1)
    assert f"port {port} on 127.0.0.1 is in use" in refusal.lines[0]


@pytest.mark.parametrize(
    ("env", "args", "named"),
    [
        ({"TOOL_SELECTOR_MAX_TOP_K": "abc"}, (), "TOOL_SELECTOR_MAX_TOP_K='abc': expected a whole"),
        ({"TOOL_SELECTOR_TOP_K": "5"}, (), "did you mean TOOL_SELECTOR_MAX_TOP_K?"),
        ({"TOOL_SELECTOR_LOG_LEVEL": "loud"}, (), "TOOL_SELECTOR_LOG_LEVEL='loud': expected one"),
        ({"TOOL_SELECTOR_REDIS_URL": "localhost"}, (), "TOOL_SELECTOR_REDIS_URL='localhost'"),
        (
            {"TOOL_SELECTOR_REDIS_URL": "redis://127.0.0.1:notaport/0"},
            (),
            "TOOL_SELECTOR_REDIS_URL='redis://127.0.0.1:notaport/0': not a Redis URL",
        ),
        (
            {"TOOL_SELECTOR_HEADER_TIMEOUT_SECONDS": "nan"},
            (),
            "TOOL_SELECTOR_HEADER_TIMEOUT_SECONDS='nan': expected a finite number",
        ),
        (
            {"TOOL_SELECTOR_HEADER_TIMEOUT_SECONDS": "1e30"},
            (),
            "TOOL_SELECTOR_HEADER_TIMEOUT_SECONDS='1e30': must be <= 3600",
        ),
        (
            {"TOOL_SELECTOR_LEARN_CALLER_SHARE": "nan"},
            (),
            "TOOL_SELECTOR_LEARN_CALLER_SHARE='nan': expected a finite number",
        ),
        (
            {"TOOL_SELECTOR_ENCODER": "onnx-int8", "TOOL_SELECTOR_EMBED_DEADLINE_MS": "5000"},
            (),
            "TOOL_SELECTOR_EMBED_DEADLINE_MS=5000 is not below "
            "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS=2",
        ),
        (
            {"TOOL_SELECTOR_MAX_BODY_BYTES": "2000", "TOOL_SELECTOR_BODY_BUFFER_BYTES": "1000"},
            (),
            "TOOL_SELECTOR_MAX_BODY_BYTES=2000 is above TOOL_SELECTOR_BODY_BUFFER_BYTES=1000",
        ),
        ({}, ("--port", "70000"), "port 70000 is not 0-65535"),
        ({}, ("--host", "localhost"), "host 'localhost' is not an IP address"),
    ],
    ids=[
        "not-a-number",
        "unknown-key",
        "log-level",
        "redis-url",
        "redis-port",
        "header-timeout-nan",
        "header-timeout-past-granian",
        "caller-share-nan",
        "embed-deadline-past-request-deadline",
        "body-past-buffer",
        "port-range",
        "host-name",
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...], named: str
) -> None:
    refusal = serve(tmp_path, {"TOOL_SELECTOR_ENCODER": "none", **env}, *args)
    assert refusal.returncode == 2
    assert len(refusal.lines) == 1, refusal.lines
    assert named in refusal.lines[0]


@pytest.fixture
def altered_bge(tmp_path: Path) -> Path:
    """The second encoder's folder with one byte of ``tokenizer.json`` changed."""
    source = default_model_dir(BGE_SMALL)
    if not (source / "tokenizer.json").is_file():
        pytest.skip(f"no {BGE_SMALL.name} files in {source} to alter (make install)")
    folder = tmp_path / "altered"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(source / "model.onnx")
    data = bytearray((source / "tokenizer.json").read_bytes())
    data[100] ^= 1
    (folder / "tokenizer.json").write_bytes(bytes(data))
    return folder


def test_an_altered_model_file_is_one_line_naming_it_and_the_fix(
    tmp_path: Path, altered_bge: Path
) -> None:
    env = {"TOOL_SELECTOR_SECOND_ENCODER_PATH": str(altered_bge)}
    refusal = serve(tmp_path, env, "--port", str(free_port()))
    assert refusal.returncode == 2
    assert len(refusal.lines) == 1, refusal.lines
    line = refusal.lines[0]
    assert "bge-small-en-v1.5: tokenizer.json is altered" in line
    assert f"tool-selector fetch-model bge-small-en-v1.5 -o {altered_bge}" in line


def test_a_missing_model_file_is_one_line_naming_it_and_the_fix(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"TOOL_SELECTOR_SECOND_ENCODER_PATH": str(empty)}
    refusal = serve(tmp_path, env, "--port", str(free_port()))
    assert refusal.returncode == 2
    assert len(refusal.lines) == 1, refusal.lines
    assert "model.onnx missing, tokenizer.json missing" in refusal.lines[0]
    assert "TOOL_SELECTOR_SECOND_ENCODER=false" in refusal.lines[0]


@pytest.mark.parametrize(
    ("content", "named"),
    [(None, "No such file or directory"), ('{"tools": 5}\n', "line 1: Expected `array`")],
    ids=["missing", "not-a-catalog"],
)
def test_a_warm_up_file_that_cannot_be_read_is_one_line_naming_it(
    tmp_path: Path, content: str | None, named: str
) -> None:
    path = tmp_path / "warmup.jsonl"
    if content is not None:
        path.write_text(content)
    env = {"TOOL_SELECTOR_ENCODER": "none", "TOOL_SELECTOR_WARMUP_FILE": str(path)}
    refusal = serve(tmp_path, env, "--port", str(free_port()))
    assert refusal.returncode == 2
    assert len(refusal.lines) == 1, refusal.lines
    assert f"TOOL_SELECTOR_WARMUP_FILE={path}" in refusal.lines[0]
    assert named in refusal.lines[0]
