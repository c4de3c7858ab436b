from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import RedisProcess, ServiceProcess, start_redis, start_service


@pytest.fixture(scope="session", autouse=True)
def _working_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests run in a folder of their own: what an app writes relative to its working
    directory (the learning folder, ``TOOL_SELECTOR_LEARN_DIR``) never lands in the checkout."""
    before = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(before)


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """The real service with embedded defaults (bundled model, memory cache), ready."""
    proc = start_service(tmp_path_factory.mktemp("service"))
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def lexical_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """The real service with the embedding model disabled (lexical ranking only)."""
    proc = start_service(
        tmp_path_factory.mktemp("lexical"), {"TOOL_SELECTOR_ENCODER": "none"}, wait_ready=False
    )
    yield proc
    proc.stop()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisProcess]:
    """A fresh redis-server on a free port, killed after the test."""
    proc = start_redis(tmp_path)
    yield proc
    proc.stop()
