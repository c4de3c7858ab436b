"""One structured (JSON) log line per search request, with patterns redactable."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
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


#: Seconds between two log lines of one recurring trouble (``Throttle``).
LOG_EVERY = 60.0


class Throttle:
    """Says when a recurring trouble may be logged again (at most once every ``seconds``),
    and how many times it happened since the last line (thread-safe)."""

    def __init__(self, seconds: float = LOG_EVERY, clock: Callable[[], float] = time.monotonic):
        self._seconds, self._clock = seconds, clock
        self._next = float("-inf")
        self._count = 0
        self._lock = threading.Lock()

    def due(self, n: int = 1) -> int:
        """Count ``n`` more; the count since the last line when one may be logged now, else 0."""
        with self._lock:
            self._count += n
            now = self._clock()
            if now < self._next:
                return 0
            self._next, count, self._count = now + self._seconds, self._count, 0
            return count
