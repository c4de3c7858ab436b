"""Warm-path decoding: a resent tool list is not decoded again, and nothing else changes."""

from __future__ import annotations

import json

import pytest

from tool_selector.errors import BadRequest
from tool_selector.pipeline.catalog_store import CatalogCache
from tool_selector.pipeline.contracts import COMPRESS, SEARCH, Contract
from tool_selector.pipeline.raw_tools import RequestDecoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

SETTINGS = Settings()
TOOLS = [
    {
        "name": f"tool_{i}",
        "description": f"does thing {i} with a long enough description to matter",
        "definition": {"type": "function", "function": {"name": f"tool_{i}", "parameters": {}}},
    }
    for i in range(60)
]


def body(
    pattern: str = "thing 3", tools: list[dict[str, object]] = TOOLS, **extra: object
) -> bytes:
    return json.dumps({"pattern": pattern, "tools": tools, **extra}).encode()


def decode_request(raw: bytes, settings: Settings, contract: Contract = SEARCH) -> SearchRequest:
    """A full decode: the same decoder with no catalog cache to recognise tools by."""
    return RequestDecoder(settings, None).decode(raw, contract).request


def served(max_tools: int = 1000) -> tuple[RequestDecoder, Selector]:
    """A decoder and a selector sharing one catalog cache, as the app wires them."""
    selector = Selector(catalogs=CatalogCache(max_tools))
    return RequestDecoder(SETTINGS, selector.catalogs), selector


def answer(decoder: RequestDecoder, selector: Selector, raw: bytes) -> tuple[list[str], int]:
    decoded = decoder.decode(raw)
    outcome = selector.select(decoded.request, decoded.catalog_key, decoded.entry)
    return outcome.ranking.names, outcome.duplicates


def test_first_sighting_is_a_full_decode_with_a_key() -> None:
    decoder, _ = served()
    first = decoder.decode(body())
    assert (first.request, first.entry) == (decode_request(body(), SETTINGS), None)
    assert first.catalog_key is not None


def test_a_resent_list_is_not_decoded_but_answers_like_a_full_decode() -> None:
    decoder, selector = served()
    answer(decoder, selector, body("first"))
    resent = body("thing 7", top_k=3, always_keep=["tool_1"])
    again = decoder.decode(resent)
    assert (again.entry is not None, again.request.tools) == (True, [])
    full = Selector().select(decode_request(resent, SETTINGS)).ranking.names
    names = answer(decoder, selector, resent)[0]
    assert (names, names[0], "tool_1" in names) == (full, "tool_7", True)


def test_a_resent_list_keeps_its_duplicate_count() -> None:
    decoder, selector = served()
    doubled = body(tools=[*TOOLS, TOOLS[0], TOOLS[1]])
    assert answer(decoder, selector, doubled)[1] == answer(decoder, selector, doubled)[1] == 2


def test_the_same_tools_share_a_catalog_key() -> None:
    decoder, _ = served()
    assert decoder.decode(body("a")).catalog_key == decoder.decode(body("b")).catalog_key


def test_changed_tools_get_another_key() -> None:
    decoder, _ = served()
    changed = [*TOOLS[:-1], {**TOOLS[-1], "description": "something else entirely"}]
    assert decoder.decode(body()).catalog_key != decoder.decode(body(tools=changed)).catalog_key


@pytest.mark.parametrize(
    ("extra", "code"),
    [({"top_k": "2"}, "invalid_request"), ({"top_k": 1000}, "top_k_out_of_range")],
    ids=["wrong-type", "out-of-range"],
)
def test_bad_fields_next_to_known_tools_are_still_refused(
    extra: dict[str, object], code: str
) -> None:
    decoder, selector = served()
    answer(decoder, selector, body())
    with pytest.raises(BadRequest) as caught:
        decoder.decode(body(**extra))
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("tools", "max_tools", "reuse"),
    [(TOOLS[:2], 1000, True), (TOOLS, 1000, False), (TOOLS, 10, True)],
    ids=["small-body", "disabled", "catalog-over-the-cache-bound"],
)
def test_full_decode_when_reuse_does_not_apply(
    tools: list[dict[str, object]], max_tools: int, reuse: bool
) -> None:
    selector = Selector(catalogs=CatalogCache(max_tools))
    decoder = RequestDecoder(SETTINGS, selector.catalogs if reuse else None)
    answer(decoder, selector, body(tools=tools))
    again = decoder.decode(body(tools=tools))
    assert (again.entry, again.request) == (None, decode_request(body(tools=tools), SETTINGS))


def test_an_entry_without_its_key_is_refused() -> None:
    decoder, selector = served()
    answer(decoder, selector, body())
    entry = decoder.decode(body()).entry
    with pytest.raises(ValueError, match="catalog_key"):
        selector.select(decode_request(body(), SETTINGS), None, entry)


def compress_body(query: str, tools: list[dict[str, object]] = TOOLS, **extra: object) -> bytes:
    return json.dumps({"query": query, "tools": tools, **extra}).encode()


def test_a_resent_compress_list_is_recognised_under_its_own_key() -> None:
    decoder, selector = served()
    first = decoder.decode(compress_body("first"), COMPRESS)
    selector.select(first.request, first.catalog_key, first.entry)
    again = decoder.decode(compress_body("thing 7", max_tools=2), COMPRESS)
    full = decode_request(compress_body("thing 7", max_tools=2), SETTINGS, COMPRESS)
    assert again.catalog_key is not None
    assert again.catalog_key.startswith("raw:compress:")
    assert (again.entry is not None, again.request.top_k, again.request.pattern) == (
        True,
        full.top_k,
        full.pattern,
    )
    names = selector.select(again.request, again.catalog_key, again.entry).ranking.names
    assert names == Selector().select(full).ranking.names


def test_a_long_pattern_is_cut_on_the_warm_path_too() -> None:
    decoder, selector = served()
    answer(decoder, selector, body("first"))
    again = decoder.decode(body("thing 7 " * 400))
    assert again.entry is not None
    assert (again.pattern_cut, again.pattern_chars) == (True, len("thing 7 " * 400))
    assert len(again.request.pattern) <= SETTINGS.max_pattern_chars + 1
