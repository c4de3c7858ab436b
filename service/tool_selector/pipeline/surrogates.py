"""JSON text whose unpaired UTF-16 surrogate escapes are read as U+FFFD, as text is.

A string cut in the middle of an emoji keeps half of its surrogate pair: JavaScript's
``JSON.stringify`` writes it as ``"\\ud83d"``, Python's ``json.dumps`` too. JSON (RFC 8259,
section 8.2) allows such an escape and leaves its meaning to the reader; msgspec refuses it,
so a proxy's whole request would be refused for half a character of its user's message.
``mend_surrogates`` rewrites each unpaired ``\\uD800``-``\\uDFFF`` escape to ``\\ufffd``
(U+FFFD REPLACEMENT CHARACTER, what a UTF-16 decoder makes of one), and ``decode_text``
decodes a body msgspec refused once more, rewritten, so every string is read the same way
wherever it sits: a pattern, a query, a context message, a tool's name, its description,
any string nested in its definition.

What is left alone: a valid pair (``\\ud83d\\ude00``), any other escape, and a backslash
that is itself escaped (``"\\\\ud83d"`` is the six characters ``\\ud83d``, not an escape).
Bytes holding no surrogate escape at all are returned as they are, after a scan for
``\\u`` (and one for ``\\u`` followed by ``d8``-``df`` when it is there): valid JSON
without a lone surrogate comes back byte-identical, so the catalog store names a tool list
by the hash of the bytes the caller sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Could the bytes hold a surrogate escape at all (the quick check before the rewrite).
_MAYBE = re.compile(rb"\\u[dD][89a-fA-F]")
#: Left to right: an escaped backslash (two bytes), a valid pair (12), a lone surrogate (6).
#: Matching ``\\\\`` first consumes backslash runs in pairs, so an escaped backslash is
#: never read as the start of an escape.
_ESCAPES = re.compile(
    rb"\\\\"
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
_LONE = 6
REPLACEMENT = rb"\ufffd"


def mend_surrogates(body: bytes) -> bytes:
    """``body`` with each unpaired surrogate escape replaced by ``\\ufffd`` (see the module)."""
    if b"\\u" not in body or _MAYBE.search(body) is None:
        return body
    return _ESCAPES.sub(_mend, body)


def decode_text(
    decode: Callable[[bytes], T], body: bytes, refused: tuple[type[Exception], ...]
) -> T:
    """``decode(body)``; when it raises one of ``refused`` and ``body`` holds a lone
    surrogate escape, ``decode`` of the mended body instead (whose error, if any, is the
    one raised). Only a refused body pays for the rewrite: scanning every body first would
    cost about as much as msgspec's own scan of it (docs/performance.md)."""
    try:
        return decode(body)
    except refused:
        mended = mend_surrogates(body)
        if mended == body:
            raise
    return decode(mended)


def _mend(match: re.Match[bytes]) -> bytes:
    found = match.group()
    return REPLACEMENT if len(found) == _LONE else found
