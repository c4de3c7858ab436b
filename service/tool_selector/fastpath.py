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

from tool_selector.catalogs import CatalogCache, CatalogEntry
from tool_selector.decoding import check_limits, decode_request
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

#: Tool arrays smaller than this are cheap to decode; they always take the full path.
MIN_RAW_KEY_BYTES = 4096


def _head_type() -> type[msgspec.Struct]:
    """``SearchRequest`` with ``tools`` left as raw bytes (derived, so it tracks the wire)."""
    fields: list[tuple[str, object, object]] = []
    for f in msgspec.structs.fields(SearchRequest):
        kind = msgspec.Raw if f.name == "tools" else f.type
        if f.default is not msgspec.NODEFAULT:
            fields.append((f.name, kind, f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, kind, msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, kind, msgspec.NODEFAULT))
    required = [(n, k) for n, k, d in fields if d is msgspec.NODEFAULT]
    optional = [(n, k, d) for n, k, d in fields if d is not msgspec.NODEFAULT]
    return msgspec.defstruct("SearchRequestHead", [*required, *optional], frozen=True)


_HEAD_TYPE = _head_type()
_HEAD = msgspec.json.Decoder(_HEAD_TYPE)
_FIELDS = [f.name for f in msgspec.structs.fields(SearchRequest) if f.name != "tools"]


@dataclass(frozen=True, slots=True)
class Decoded:
    """A validated request; for a resent tool list, its catalog key and cached catalog.

    When ``entry`` is set the tools were not decoded: ``request.tools`` is empty and the
    selector answers from ``entry`` (``Selector.select(request, catalog_key, entry)``).
    """

    request: SearchRequest
    catalog_key: str | None = None
    entry: CatalogEntry | None = None


class RequestDecoder:
    """``decode_request`` that recognises a resent tool list by its raw bytes' hash and skips
    decoding it when the catalog cache holds its catalog (``catalogs=None`` disables that)."""

    def __init__(self, settings: Settings, catalogs: CatalogCache | None) -> None:
        self._settings = settings
        self._catalogs = catalogs

    def decode(self, body: bytes) -> Decoded:
        """Decode and validate ``body``; raises the same ``BadRequest`` as ``decode_request``."""
        head = self._head(body)
        if head is None or self._catalogs is None:
            return Decoded(decode_request(body, self._settings))
        raw = head.tools  # type: ignore[attr-defined]
        # sha1: fast in hardware; only a second preimage of someone's catalog could mislead
        key = "raw:" + hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        entry = self._catalogs.get(key)
        if entry is None:
            return Decoded(decode_request(body, self._settings), key)
        request = SearchRequest(tools=[], **{f: getattr(head, f) for f in _FIELDS})
        # the tools passed check_limits when their catalog was built, under the same settings
        check_limits(request, self._settings)
        return Decoded(request, key, entry)

    def _head(self, body: bytes) -> msgspec.Struct | None:
        if self._catalogs is None or len(body) < MIN_RAW_KEY_BYTES:
            return None
        try:
            head: msgspec.Struct = _HEAD.decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return None
        return head if len(head.tools) >= MIN_RAW_KEY_BYTES else None  # type: ignore[attr-defined]
