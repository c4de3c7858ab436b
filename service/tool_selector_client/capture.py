"""Decision capture: one JSON object per line, for the ``shadow-compare`` report.

A record::

    {"ts": 1763772000.12, "mode": "shadow", "session": "3f2a9c01d4e5b6a7",
     "pattern": "send a slack message", "top_k": 5, "always_keep": [],
     "tools": ["read_file", "slack_send"], "selected": ["slack_send"],
     "relevance": ["slack_send"], "latency_ms": 12.4, "outcome": "ok", "status": 200,
     "applied": false, "returned": 2}

With ``redact_pattern`` (the default) ``pattern`` is ``null`` and ``pattern_sha256`` /
``pattern_chars`` stand in for it; the session id is always hashed. ``tools`` holds names
only, or ``{"name", "description"}`` objects (``tool_detail="descriptions"``), or the raw
definitions (``"definitions"``); replaying against a service needs an unredacted pattern and
ranks better with descriptions.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from tool_selector_client.definitions import expand, tool_description, tool_name

__all__ = ["CaptureWriter", "ToolDetail", "hash_text"]

ToolDetail = Literal["names", "descriptions", "definitions"]
_ENCODER = msgspec.json.Encoder()


def hash_text(text: str, length: int = 16) -> str:
    """A short stable sha256 hex digest of ``text``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


class CaptureWriter:
    """Appends decision records to a JSONL file; thread-safe; write errors counted, not raised."""

    def __init__(
        self,
        path: str | Path,
        *,
        redact_pattern: bool = True,
        tool_detail: ToolDetail = "names",
    ) -> None:
        self.path = Path(path)
        self.redact_pattern = redact_pattern
        self.tool_detail = tool_detail
        self.errors = 0
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None

    def tools_field(self, tools: list[Any]) -> list[Any]:
        """The ``tools`` field for ``tools`` at this writer's level of detail."""
        defs = list(expand(tools))
        if self.tool_detail == "definitions":
            return defs
        named = [(tool_name(d), d) for d in defs]
        if self.tool_detail == "descriptions":
            return [{"name": n, "description": tool_description(d)} for n, d in named if n]
        return [n for n, _ in named if n]

    def record(self, pattern: str, tools: list[Any], session_id: str | None, **fields: Any) -> None:
        """Write one record (``fields`` are added as they are)."""
        try:
            rec: dict[str, Any] = {"ts": round(time.time(), 3)}
            rec["session"] = hash_text(session_id) if session_id else None
            if self.redact_pattern:
                rec["pattern"] = None
                rec["pattern_sha256"] = hash_text(pattern)
                rec["pattern_chars"] = len(pattern)
            else:
                rec["pattern"] = pattern
            rec["tools"] = self.tools_field(tools)
            rec.update(fields)
            line = _ENCODER.encode(rec) + b"\n"
            with self._lock:
                if self._file is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._file = self.path.open("ab")
                self._file.write(line)
                self._file.flush()
        except Exception:  # capture is best effort; the proxy's request goes on
            self.errors += 1

    def close(self) -> None:
        """Close the file (a later record reopens it)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
