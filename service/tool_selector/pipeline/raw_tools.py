"""Warm-path decoding: a resent tool list is not decoded again, nor kept twice.

A proxy resends the same deferred tools on every model turn, byte for byte. Decoding them
into structs and walking every definition for the limits costs far more than ranking (about
100 ms for 4,000 tools on 2 cores). So the request is first decoded with ``tools`` kept as
raw bytes (``msgspec.Raw``: a scan, no objects; every other field validated as usual) and
the bytes are hashed. The hash keys the catalog cache: when a catalog was built from the
same bytes, they were decoded and validated then (under the same settings), and the catalog
holds everything ranking needs, so the tools are not decoded at all and the entry is handed
to the selector. Identical bytes decode to identical tools, so the answer cannot differ
from a full decode; anything unusual takes the full path. One known difference: a body with
the ``tools`` key twice is answered from the last copy (as a full decode answers it), but an
invalid earlier copy is not rejected; detecting it would mean scanning the body for keys
(a parameter named ``tools`` inside a definition is not a second key).

Nothing is remembered here: the decoded tools of a catalog are not kept anywhere (an earlier
version kept them in a memo of their own, thousands of dicts per catalog that every full
garbage-collector pass had to walk: 120 ms pauses with 60 cold catalogs cached).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgspec

from tool_selector.pipeline.catalog_store import CatalogCache, CatalogEntry
from tool_selector.pipeline.contracts import CONTRACTS, SEARCH, Contract
from tool_selector.pipeline.decoding import checked, decode_wire
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

#: Tool arrays smaller than this are cheap to decode; they always take the full path.
MIN_RAW_KEY_BYTES = 4096


def _head_type(wire: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """``wire`` with ``tools`` left as raw bytes (derived, so it tracks the wire type)."""
    fields: list[tuple[str, object, object]] = []
    for f in msgspec.structs.fields(wire):
        kind = msgspec.Raw if f.name == "tools" else f.type
        if f.default is not msgspec.NODEFAULT:
            fields.append((f.name, kind, f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, kind, msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, kind, msgspec.NODEFAULT))
    required = [(n, k) for n, k, d in fields if d is msgspec.NODEFAULT]
    optional = [(n, k, d) for n, k, d in fields if d is not msgspec.NODEFAULT]
    return msgspec.defstruct(f"{wire.__name__}Head", [*required, *optional], frozen=True)


_HEADS = {c.name: msgspec.json.Decoder(_head_type(c.wire)) for c in CONTRACTS}
_FIELDS = {
    c.name: [f.name for f in msgspec.structs.fields(c.wire) if f.name != "tools"] for c in CONTRACTS
}


@dataclass(frozen=True, slots=True)
class Decoded:
    """A validated request; for a resent tool list, its catalog key and cached catalog.

    When ``entry`` is set the tools were not decoded: ``request.tools`` is empty and the
    selector answers from ``entry`` (``Selector.select(request, catalog_key, entry)``).
    ``pattern_chars``: the pattern's length as sent (longer than ``request.pattern`` when
    it was cut).
    """

    request: SearchRequest
    catalog_key: str | None = None
    entry: CatalogEntry | None = None
    pattern_chars: int = 0

    @property
    def pattern_cut(self) -> bool:
        """Whether the pattern was cut to ``max_pattern_chars``."""
        return self.pattern_chars > len(self.request.pattern)


class RequestDecoder:
    """Full decoding that recognises a resent tool list by its raw bytes' hash and skips
    decoding it when the catalog cache holds its catalog (``catalogs=None`` disables that)."""

    def __init__(self, settings: Settings, catalogs: CatalogCache | None) -> None:
        self._settings = settings
        self._catalogs = catalogs

    def decode(self, body: bytes, contract: Contract = SEARCH) -> Decoded:
        """Decode and validate ``body`` of ``contract``; raises ``BadRequest``."""
        head = self._head(body, contract)
        if head is None or self._catalogs is None:
            return _full(body, self._settings, contract)
        raw = head.tools  # type: ignore[attr-defined]
        # sha1: fast in hardware; only a second preimage of someone's catalog could mislead
        digest = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        key = f"raw:{contract.name}:{digest}"
        entry = self._catalogs.get(key)
        if entry is None:
            return _full(body, self._settings, contract, key)
        fields = {f: getattr(head, f) for f in _FIELDS[contract.name]}
        sent = contract.to_search(contract.wire(tools=[], **fields))
        # the tools passed check_limits when their catalog was built, under the same settings
        request = checked(sent, self._settings, contract)
        return Decoded(request, key, entry, len(sent.pattern))

    def _head(self, body: bytes, contract: Contract) -> msgspec.Struct | None:
        if self._catalogs is None or len(body) < MIN_RAW_KEY_BYTES:
            return None
        try:
            head: msgspec.Struct = _HEADS[contract.name].decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return None
        return head if len(head.tools) >= MIN_RAW_KEY_BYTES else None  # type: ignore[attr-defined]


def _full(body: bytes, settings: Settings, contract: Contract, key: str | None = None) -> Decoded:
    """Decode everything; ``pattern_chars`` from the adapted request before its cut."""
    sent = contract.to_search(decode_wire(body, contract))
    return Decoded(checked(sent, settings, contract), key, None, len(sent.pattern))
