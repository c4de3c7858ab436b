"""One structured (JSON) log line per search request, with patterns redactable."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import msgspec

ACCESS_LOGGER = "tool_selector.access"
_ENCODER = msgspec.json.Encoder()


def redact(text: str) -> str:
    """A stable stand-in for ``text``: its length and a short hash, never the words."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"<redacted len={len(text)} sha256={digest}>"


def log_request(logger: logging.Logger, fields: dict[str, Any]) -> None:
    """Emit ``fields`` as one JSON object on one line."""
    if logger.isEnabledFor(logging.INFO):
        logger.info(_ENCODER.encode(fields).decode())
