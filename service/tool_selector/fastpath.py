"""Warm-path decoding: skip re-decoding and re-validating a tool list seen before.

A proxy resends the same deferred tools on every model turn, byte for byte. Decoding them
into structs and walking every definition for the limits costs far more than ranking (about
100 ms for 4,000 tools on 2 cores). So the request is first decoded with ``tools`` kept as
raw bytes (``msgspec.Raw``: a scan, no objects; every other field validated as usual) and
the bytes are hashed; when the same bytes were decoded and validated before, the remembered
tool list is put back. The hash also keys the catalog cache, so
the selector need not fingerprint the tools again. Identical bytes decode to identical
tools, so the answer cannot differ from a full decode; anything unusual takes the full path.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import msgspec

from tool_selector.decoding import check_limits, decode_request
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

#: Tool arrays smaller than this are cheap to decode; they always take the full path.
MIN_MEMO_BYTES = 4096


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
    """A validated request and, when its tools were memoised, their catalog key."""

    request: SearchRequest
    catalog_key: str | None = None


class RequestDecoder:
    """``decode_request`` with an LRU of validated tool lists keyed by their raw bytes' hash,
    bounded by the total number of tools held (0 disables it)."""

    def __init__(self, settings: Settings, max_tools: int) -> None:
        self._settings = settings
        self._max_tools = max_tools
        self._tools = 0
        self._items: OrderedDict[str, list[Tool]] = OrderedDict()
        self._lock = threading.Lock()

    def decode(self, body: bytes) -> Decoded:
        """Decode and validate ``body``; raises the same ``BadRequest`` as ``decode_request``."""
        head = self._head(body)
        if head is None:
            return Decoded(decode_request(body, self._settings))
        raw = head.tools  # type: ignore[attr-defined]
        # sha1: fast in hardware; only a second preimage of someone's catalog could mislead
        key = "raw:" + hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        with self._lock:
            tools = self._items.get(key)
            if tools is not None:
                self._items.move_to_end(key)
        if tools is None:
            request = decode_request(body, self._settings)
            self._remember(key, request.tools)
            return Decoded(request, key)
        request = SearchRequest(tools=[], **{f: getattr(head, f) for f in _FIELDS})
        check_limits(request, self._settings)
        # the tools passed check_limits when first decoded, under the same settings
        return Decoded(msgspec.structs.replace(request, tools=tools), key)

    def _head(self, body: bytes) -> msgspec.Struct | None:
        if self._max_tools <= 0 or len(body) < MIN_MEMO_BYTES:
            return None
        try:
            head: msgspec.Struct = _HEAD.decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return None
        return head if len(head.tools) >= MIN_MEMO_BYTES else None  # type: ignore[attr-defined]

    def _remember(self, key: str, tools: list[Tool]) -> None:
        if len(tools) > self._max_tools:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = tools
            self._tools += len(tools)
            while self._tools > self._max_tools:
                _, evicted = self._items.popitem(last=False)
                self._tools -= len(evicted)
