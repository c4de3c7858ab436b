"""A body that resends a held tool list is decoded without scanning the list's bytes, and
reads exactly as a whole decode reads it (``Decoder._resent``, ``RawNames.resent``).

The oracle is a decoder holding nothing (every body decoded whole): the same ``Ask`` field
for field, the same tools under the same name, or the same error.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tool_selector.pipeline.decoding as decoding
from tool_selector.errors import BadRequest
from tool_selector.pipeline.ask import Ask
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.raw_names import SHALLOW, json_depth
from tool_selector.settings import Settings
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH

SETTINGS = Settings()


def tools(tag: str, n: int = 60) -> list[dict[str, Any]]:
    return [
        {
            "name": f"{tag}_{i}",
            "description": f"does thing {i} of {tag}, described at a length that matters",
            "definition": {"type": "function", "function": {"name": f"{tag}_{i}"}},
        }
        for i in range(n)
    ]


HELD, OTHER = tools("held"), tools("other")
LIST = json.dumps(HELD).encode()


def encode(fields: list[tuple[str, Any]], colon: bytes = b": ") -> bytes:
    """A JSON object with ``fields`` in this order (a key may come twice), the held list
    written with ``json.dumps`` as it was first sent."""
    parts = [json.dumps(k).encode() + colon + json.dumps(v).encode() for k, v in fields]
    return b"{" + b", ".join(parts) + b"}"


def hold(decoder: Decoder, body: bytes, path: str = SEARCH_PATH) -> Decoder:
    """``decoder`` after ``body``'s list was named and its tools loaded, as a first request
    on a new catalog has them."""
    tools = decoder.decode(body, path)[1].tools
    assert tools.key
    assert tools.load()
    return decoder


def held_decoder() -> Decoder:
    return hold(Decoder(SETTINGS), encode([("pattern", "first"), ("tools", HELD)]))


def read(decoder: Decoder, body: bytes, path: str = SEARCH_PATH) -> tuple[Any, ...]:
    """What a caller gets: every field of the ``Ask``, the tools' name and tools; or the error."""
    try:
        contract, ask = decoder.decode(body, path)
    except BadRequest as exc:
        return ("error", exc.code, exc.detail)
    fields = tuple(getattr(ask, f.name) for f in dataclasses.fields(Ask) if f.name != "tools")
    try:
        loaded: Any = ask.tools.load()
    except BadRequest as exc:
        loaded = ("error", exc.code, exc.detail)
    return (contract.name, fields, ask.tools.key, loaded)


def scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the bodies whose head is decoded from now on."""
    sizes: list[int] = []
    head = decoding._decode

    def counted(contract: Any, body: bytes) -> Any:
        sizes.append(len(body))
        return head(contract, body)

    monkeypatch.setattr(decoding, "_decode", counted)
    return sizes


def test_a_resent_list_is_not_scanned_and_reads_as_a_whole_decode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoder = held_decoder()
    body = encode([("pattern", "thing 7 please"), ("tools", HELD), ("top_k", 3)])
    sizes = scanned(monkeypatch)
    got = read(decoder, body)
    assert sizes
    assert max(sizes) < len(LIST)  # the head was read without the list
    assert got == read(Decoder(SETTINGS), body)
    assert got[2].startswith("raw:search:")


def test_a_list_that_is_not_the_top_level_tools_is_not_taken_for_it() -> None:
    decoder = held_decoder()
    body = encode([("pattern", "p"), ("junk", {"tools": HELD}), ("tools", OTHER)])
    got = read(decoder, body)
    assert got == read(Decoder(SETTINGS), body)
    assert [t.name for t in got[3]][:1] == ["other_0"]


def test_the_last_of_two_tools_keys_is_the_one_read() -> None:
    decoder = held_decoder()
    body = encode([("tools", HELD), ("pattern", "p"), ("tools", OTHER)])
    assert read(decoder, body) == read(Decoder(SETTINGS), body)


def test_a_bad_field_beside_a_resent_list_is_the_whole_decode_s_error() -> None:
    decoder = held_decoder()
    for extra in [("top_k", "2"), ("top_k", 10_000), ("pattern", "")]:
        body = encode([("pattern", "p"), ("tools", HELD), extra])
        got = read(decoder, body)
        assert got[0] == "error"
        assert got == read(Decoder(SETTINGS), body)


def test_a_body_holding_the_mark_is_decoded_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = held_decoder()
    mark = json.loads(decoding._MARK)
    body = encode([("pattern", mark), ("tools", HELD)])
    sizes = scanned(monkeypatch)
    assert read(decoder, body) == read(Decoder(SETTINGS), body)
    assert max(sizes) == len(body)


def test_a_mark_sent_as_the_tools_is_not_taken_for_the_held_list() -> None:
    decoder = held_decoder()
    mark = json.loads(decoding._MARK)
    body = encode([("pattern", "p"), ("junk", {"tools": HELD}), ("tools", mark)])
    got = read(decoder, body)
    assert got == read(Decoder(SETTINGS), body)
    assert got[3][0] == "error"  # a string is no tool list


def test_the_compress_contract_s_list_is_held_apart() -> None:
    decoder = held_decoder()  # held as the search contract's
    body = encode([("query", "p"), ("tools", HELD)])
    got = read(decoder, body, COMPRESS_PATH)
    assert got == read(Decoder(SETTINGS), body, COMPRESS_PATH)
    assert got[2].startswith("raw:compress:")


def test_a_list_held_under_both_contracts_is_found_for_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoder = held_decoder()
    compress = [("query", "first"), ("tools", HELD)]
    hold(decoder, encode(compress), COMPRESS_PATH)
    sizes = scanned(monkeypatch)
    for fields, path in [
        (compress, COMPRESS_PATH),
        ([("pattern", "p"), ("tools", HELD)], SEARCH_PATH),
    ]:
        body = encode(fields)
        assert read(decoder, body, path) == read(Decoder(SETTINGS), body, path)
    assert max(sizes[:1]) < len(LIST)  # the compress body was read without the list


@pytest.mark.parametrize("colon", [b":", b" :\r\n\t ", b": "])
def test_a_resent_list_is_found_whatever_the_space_around_the_colon(
    monkeypatch: pytest.MonkeyPatch, colon: bytes
) -> None:
    decoder = held_decoder()
    body = encode([("pattern", "p"), ("tools", HELD)], colon)
    expected = read(Decoder(SETTINGS), body)
    sizes = scanned(monkeypatch)
    assert read(decoder, body) == expected
    assert max(sizes) < len(LIST)


def test_lists_resent_in_turn_stay_found(monkeypatch: pytest.MonkeyPatch) -> None:
    lists = [HELD[:-1] + tools(f"last{n}", 1) for n in range(40)]  # the same first bytes
    decoder = Decoder(SETTINGS)
    for n, listed in enumerate(lists):
        hold(decoder, encode([("pattern", f"first {n}"), ("tools", listed)]))
    bodies = [encode([("pattern", f"again {n}"), ("tools", x)]) for n, x in enumerate(lists)]
    expected = [Decoder(SETTINGS).decode(b, SEARCH_PATH)[1].tools.key for b in bodies]
    sizes = scanned(monkeypatch)
    for _ in range(3):  # resent as a proxy resends them: named, never loaded again
        assert [decoder.decode(b, SEARCH_PATH)[1].tools.key for b in bodies] == expected
    assert max(sizes) < len(LIST)  # each was found every time


def test_a_list_dropped_by_the_held_bytes_is_found_again(monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = Decoder(Settings(raw_names_bytes=3 * len(LIST)))  # holds about two lists
    lists = [tools(f"list{n}") for n in range(4)]
    for n, listed in enumerate(lists):
        hold(decoder, encode([("pattern", f"first {n}"), ("tools", listed)]))
    body = encode([("pattern", "again"), ("tools", lists[0])])  # dropped by now
    sizes = scanned(monkeypatch)
    for _ in "ab":  # named again from its bytes (hashed), then found
        assert decoder.decode(body, SEARCH_PATH)[1].tools.key
    assert [n == len(body) for n in sizes] == [True, False]


def test_a_list_the_index_dropped_is_found_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import tool_selector.pipeline.raw_names as raw_names  # noqa: PLC0415

    monkeypatch.setattr(raw_names, "_PROBES", 8)
    lists = [tools(f"list{n}") for n in range(12)]
    decoder = Decoder(SETTINGS)
    for n, listed in enumerate(lists):
        hold(decoder, encode([("pattern", f"first {n}"), ("tools", listed)]))
    body = encode([("pattern", "again"), ("tools", lists[0])])  # out of the index by now
    sizes = scanned(monkeypatch)
    for _ in "ab":  # named from its held bytes, back in the index, then found
        assert decoder.decode(body, SEARCH_PATH)[1].tools.key
    assert [n == len(body) for n in sizes] == [True, False]


def test_a_list_nested_deeper_than_shallow_is_decoded_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deep: Any = "leaf"
    for _ in range(SHALLOW + 5):
        deep = {"x": deep}
    listed = [*HELD[:-1], {**HELD[-1], "extra": deep}]  # an unknown field: never checked
    decoder = hold(Decoder(SETTINGS), encode([("pattern", "first"), ("tools", listed)]))
    assert_decoded_whole(decoder, listed, monkeypatch)


def assert_decoded_whole(
    decoder: Decoder, listed: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body resending ``listed`` reads as a whole decode reads it, and was decoded whole."""
    body = encode([("pattern", "again"), ("tools", listed)])
    expected = read(Decoder(SETTINGS), body)
    sizes = scanned(monkeypatch)
    assert read(decoder, body) == expected
    assert sizes == [len(body)]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}\n:,'),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=JSON, ascii_only=st.booleans())
def test_json_depth_is_the_nesting_of_arrays_and_objects(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert json_depth(data) == depth_of(value)


def test_a_list_whose_tools_are_refused_is_refused_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = [*HELD[:-1], {**HELD[-1], "name": ""}]
    decoder = Decoder(SETTINGS)
    first = decoder.decode(encode([("pattern", "first"), ("tools", refused)]), SEARCH_PATH)[1]
    assert first.tools.key
    body = encode([("pattern", "again"), ("tools", refused)])
    expected = read(Decoder(SETTINGS), body)
    sizes = scanned(monkeypatch)
    assert read(decoder, body) == expected
    assert expected[3][0] == "error"
    assert max(sizes) < len(body)  # found: its tools are decoded from the same bytes


def test_a_list_edited_in_the_middle_is_found_from_its_next_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edited = [*HELD[:30], {**HELD[30], "name": "held_X0"}, *HELD[31:]]  # same length and ends
    decoder = held_decoder()
    hold(decoder, encode([("pattern", "first"), ("tools", edited)]))
    body = encode([("pattern", "again"), ("tools", edited)])
    expected = read(Decoder(SETTINGS), body)
    sizes = scanned(monkeypatch)
    for _ in "abc":
        assert read(decoder, body) == expected
    assert max(sizes) < len(body)


def test_lists_of_the_same_length_and_ends_sent_in_turn_are_both_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edited = [*HELD[:30], {**HELD[30], "name": "held_X0"}, *HELD[31:]]
    decoder = held_decoder()
    hold(decoder, encode([("pattern", "first"), ("tools", edited)]))
    bodies = [
        encode([("pattern", f"again {n}"), ("tools", x)]) for n, x in enumerate([HELD, edited])
    ]
    expected = [read(Decoder(SETTINGS), b) for b in bodies]
    sizes = scanned(monkeypatch)
    for _ in "abc":
        assert [read(decoder, b) for b in bodies] == expected
    assert max(sizes) < len(LIST)


def test_the_newest_list_of_a_probe_is_held_when_two_do_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edited = [*HELD[:30], {**HELD[30], "name": "held_X0"}, *HELD[31:]]
    first = encode([("pattern", "first"), ("tools", HELD)])
    decoder = hold(Decoder(Settings(raw_names_bytes=len(LIST) * 3 // 2)), first)
    hold(decoder, encode([("pattern", "first"), ("tools", edited)]))
    body = encode([("pattern", "again"), ("tools", edited)])
    expected = read(Decoder(SETTINGS), body)
    sizes = scanned(monkeypatch)
    assert read(decoder, body) == expected
    assert max(sizes) < len(LIST)


def test_a_number_and_its_prefix_keep_their_own_names() -> None:
    long, short = b"1" * 5001, b"1" * 5000  # held under the two contracts, one a prefix
    decoder = Decoder(SETTINGS)
    assert decoder.decode(b'{"pattern": "p", "tools": ' + long + b"}", SEARCH_PATH)[1].tools.key
    compress = b'{"query": "p", "tools": ' + short + b"}"
    assert decoder.decode(compress, COMPRESS_PATH)[1].tools.key
    body = b'{"query": "q", "tools": ' + long + b"}"
    assert read(decoder, body, COMPRESS_PATH) == read(Decoder(SETTINGS), body, COMPRESS_PATH)


def test_a_list_whose_depth_was_forgotten_is_measured_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tool_selector.pipeline.raw_names as raw_names  # noqa: PLC0415

    monkeypatch.setattr(raw_names, "_NAMES", 2)
    lists = [tools(f"list{n}") for n in range(4)]
    decoder = Decoder(SETTINGS)
    for n, listed in enumerate(lists):
        hold(decoder, encode([("pattern", f"first {n}"), ("tools", listed)]))
    body = encode([("pattern", "again"), ("tools", lists[0])])  # its depth forgotten by now
    sizes = scanned(monkeypatch)
    for _ in "ab":
        assert decoder.decode(body, SEARCH_PATH)[1].tools.key
    assert [n == len(body) for n in sizes] == [True, False]


FIELDS = st.lists(
    st.sampled_from(
        [
            ("tools", HELD),
            ("tools", OTHER),
            ("tools", []),
            ("tools", 0),
            ("tools", "\u0000 the tools this body resends"),
            ("pattern", "thing 3"),
            ("pattern", '"tools": ['),
            ("pattern", ""),
            ("top_k", 2),
            ("top_k", "2"),
            ("always_keep", ["held_1"]),
            ("junk", {"tools": HELD}),
            ("junk", HELD),
            ("explain", True),
            ("min_score", 0.3),
        ]
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    fields=FIELDS,
    path=st.sampled_from([SEARCH_PATH, COMPRESS_PATH]),
    colon=st.sampled_from([b": ", b":", b" :\n "]),
)
def test_any_body_reads_as_a_whole_decode_reads_it(
    fields: list[tuple[str, Any]], path: str, colon: bytes
) -> None:
    body = encode(fields, colon)
    assert read(held_decoder(), body, path) == read(Decoder(SETTINGS), body, path)


def test_nothing_is_held_with_no_bytes_to_keep(monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = hold(
        Decoder(Settings(raw_names_bytes=0)), encode([("pattern", "first"), ("tools", HELD)])
    )
    body = encode([("pattern", "again"), ("tools", HELD)])
    sizes = scanned(monkeypatch)
    decoder.decode(body, SEARCH_PATH)
    assert sizes == [len(body)]


def test_a_held_list_s_tools_decode_from_its_held_bytes() -> None:
    decoder = held_decoder()
    body = encode([("pattern", "p"), ("tools", HELD)])
    loaded = decoder.decode(body, SEARCH_PATH)[1].tools.load()
    assert [t.name for t in loaded] == [t["name"] for t in HELD]
    assert (
        msgspec.json.encode(loaded[0].definition)
        == json.dumps(HELD[0]["definition"]).replace(" ", "").encode()
    )
