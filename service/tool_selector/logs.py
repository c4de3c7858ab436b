"""One structured (JSON) log line per search request, with patterns redactable."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from typing import Any

import msgspec

ACCESS_LOGGER = "tool_selector.access"
_ENCODER = msgspec.json.Encoder()


class Redactor:
    """Stands in for a pattern with its length and a keyed hash, never the words.

    HMAC-SHA256 under a secret key (``TOOL_SELECTOR_LOG_REDACT_KEY``, else random per
    process): someone who reads the logs cannot confirm a guessed pattern by hashing it, as
    they could with a plain hash, while equal patterns still share a stand-in (to count
    repeats). 64 bits of the MAC are kept.
    """

    def __init__(self, key: str | bytes = b"") -> None:
        raw = key.encode() if isinstance(key, str) else key
        self._key = raw or secrets.token_bytes(32)

    def __call__(self, text: str) -> str:
        mac = hmac.new(self._key, text.encode("utf-8", "surrogatepass"), hashlib.sha256)
        return f"<redacted len={len(text)} hmac={mac.hexdigest()[:16]}>"


def log_request(logger: logging.Logger, fields: dict[str, Any]) -> None:
    """Emit ``fields`` as one JSON object on one line."""
    if logger.isEnabledFor(logging.INFO):
        logger.info(_ENCODER.encode(fields).decode())
