"""What the learner keeps, as MessagePack (on disk and in Redis): ``Shown`` (a remembered
search, kept for ``TOOL_SELECTOR_LEARN_SEARCH_TTL_SECONDS`` so feedback can name it) and
``Called`` (a search's feedback: the scope's evidence), both defined with the evidence they
make (``ranking.learned``). Neither holds the pattern's words: the vector and 8-byte term
hashes only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import msgspec

from tool_selector.logs import Throttle
from tool_selector.ranking.learned import Called, Shown

__all__ = ["CALLED", "ENCODE", "SHOWN", "Called", "Shown", "decoded"]

_log = logging.getLogger(__name__)
_SKIPPED = Throttle()  # a bad record read again at every read is said once a minute
T = TypeVar("T")

ENCODE = msgspec.msgpack.Encoder().encode
SHOWN = msgspec.msgpack.Decoder(Shown)
CALLED = msgspec.msgpack.Decoder(Called)


def decoded(payloads: Iterable[bytes], decode: Callable[[bytes], T]) -> Iterator[T]:
    """Each payload decoded; one that does not decode (a record of another version, a key
    written by hand) skipped, with a warning at most once a minute, so it fails no search
    nor feedback."""
    for payload in payloads:
        try:
            yield decode(payload)
        except msgspec.DecodeError as exc:
            if count := _SKIPPED.due():
                _log.warning("learning: %d record(s) that do not decode skipped: %s", count, exc)
