"""What the learner keeps, as msgspec records (MessagePack on disk and in Redis).

``Shown``: a remembered search (its scope, who asked, its pattern's vector and hashed terms,
the tools it answered); kept for ``TOOL_SELECTOR_LEARN_SEARCH_TTL_SECONDS`` so feedback can
name it. ``Called``: one search's feedback, the scope's evidence. Neither holds the pattern's
words: the vector and 8-byte term hashes only.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.learned import Event


class Shown(msgspec.Struct, array_like=True, frozen=True):
    """A search the service answered: ``tools`` (identities, ``ranking.learned``) and
    ``names`` in the answer's order; ``vector``: the first model's unit vector of the
    pattern, float32 bytes."""

    id: str
    scope: str
    caller: str
    at: float
    vector: bytes
    terms: tuple[int, ...]
    tools: tuple[str, ...]
    names: tuple[str, ...]


class Called(msgspec.Struct, array_like=True, frozen=True):
    """A search's feedback: what it showed (identities and names) and which of those the
    model called (identities; empty: none); ``retry``: the same caller's search just before
    it in the scope saw nothing called (the model searched again)."""

    search: str
    caller: str
    at: float
    vector: bytes
    terms: tuple[int, ...]
    tools: tuple[str, ...]
    names: tuple[str, ...]
    called: tuple[str, ...]
    retry: bool = False

    def event(self) -> Event:
        """The record as ``ranking.learned`` reads it."""
        vector: FloatArray = np.frombuffer(self.vector, dtype=np.float32)
        return Event(self.at, self.caller, vector, self.terms, self.tools, self.called)


ENCODE = msgspec.msgpack.Encoder().encode
SHOWN = msgspec.msgpack.Decoder(Shown)
CALLED = msgspec.msgpack.Decoder(Called)
