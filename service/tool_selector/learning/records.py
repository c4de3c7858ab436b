"""What the learner keeps, as MessagePack (on disk and in Redis): ``Shown`` (a remembered
search, kept for ``TOOL_SELECTOR_LEARN_SEARCH_TTL_SECONDS`` so feedback can name it) and
``Called`` (a search's feedback: the scope's evidence), both defined with the evidence they
make (``ranking.learned``). Neither holds the pattern's words: the vector and 8-byte term
hashes only.
"""

from __future__ import annotations

import msgspec

from tool_selector.ranking.learned import Called, Shown

__all__ = ["CALLED", "ENCODE", "SHOWN", "Called", "Shown"]

ENCODE = msgspec.msgpack.Encoder().encode
SHOWN = msgspec.msgpack.Decoder(Shown)
CALLED = msgspec.msgpack.Decoder(Called)
