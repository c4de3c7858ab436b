"""The warm-up file (``TOOL_SELECTOR_WARMUP_FILE``): catalogs embedded before serving."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import msgspec

from tool_selector.errors import ConfigError
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.surrogates import mend_surrogates
from tool_selector_client.wire import Tool


class _WarmupLine(msgspec.Struct):
    tools: list[Tool]


def read_warmup(path: Path) -> list[list[Tool]]:
    """Catalogs of a warm-up file: one JSON object ``{"tools": [...]}`` per line."""
    decoder = msgspec.json.Decoder(_WarmupLine)
    catalogs: list[list[Tool]] = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise ConfigError(f"TOOL_SELECTOR_WARMUP_FILE={path}: {exc.strerror}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            catalogs.append(decoder.decode(mend_surrogates(line)).tools)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"TOOL_SELECTOR_WARMUP_FILE={path} line {number}: {exc}") from exc
    return catalogs


def check_warmup_file(path: str) -> None:
    """``ConfigError`` naming the key when the warm-up file is set but cannot be read or a
    line is no catalog, before ``serve`` hands over to granian: in the worker the replica
    would start and never be ready (``/readyz`` 503 for ever)."""
    if path:
        read_warmup(Path(path))


def warm_up(selector: Selector, path: Path) -> None:
    """Embed every catalog of the warm-up file now, logging progress (blocks until done)."""
    logger = logging.getLogger("tool_selector.warmup")
    catalogs = read_warmup(path)
    started = time.perf_counter()
    for n, tools in enumerate(catalogs, 1):
        encoded = selector.warm(tools)
        logger.info(
            "warm-up %d/%d: %d tools, %d encoded (%.1fs)",
            n,
            len(catalogs),
            len(tools),
            encoded,
            time.perf_counter() - started,
        )
    selector.cache.flush(10.0)
