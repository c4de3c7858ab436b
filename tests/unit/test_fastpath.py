"""Warm-path decoding: a resent tool list is not decoded again, and nothing else changes."""

from __future__ import annotations

import json

import pytest

from tool_selector.decoding import decode_request
from tool_selector.errors import BadRequest
from tool_selector.fastpath import RequestDecoder
from tool_selector.settings import Settings

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


def test_a_resent_catalog_decodes_like_a_full_decode() -> None:
    dec = RequestDecoder(SETTINGS, max_tools=1000)
    dec.decode(body("first"))
    again = dec.decode(body("second", top_k=3, always_keep=["tool_1"]))
    assert again.request == decode_request(
        body("second", top_k=3, always_keep=["tool_1"]), SETTINGS
    )


def test_the_same_tools_share_a_catalog_key() -> None:
    dec = RequestDecoder(SETTINGS, max_tools=1000)
    assert dec.decode(body("a")).catalog_key == dec.decode(body("b")).catalog_key


def test_changed_tools_get_another_key() -> None:
    dec = RequestDecoder(SETTINGS, max_tools=1000)
    changed = [*TOOLS[:-1], {**TOOLS[-1], "description": "something else entirely"}]
    assert dec.decode(body()).catalog_key != dec.decode(body(tools=changed)).catalog_key


@pytest.mark.parametrize(
    ("extra", "code"),
    [({"top_k": "2"}, "invalid_request"), ({"top_k": 1000}, "top_k_out_of_range")],
    ids=["wrong-type", "out-of-range"],
)
def test_bad_fields_next_to_memoised_tools_are_still_refused(
    extra: dict[str, object], code: str
) -> None:
    dec = RequestDecoder(SETTINGS, max_tools=1000)
    dec.decode(body())
    with pytest.raises(BadRequest) as caught:
        dec.decode(body(**extra))
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("tools", "max_tools"),
    [(TOOLS[:2], 1000), (TOOLS, 0), (TOOLS, 10)],
    ids=["small-body", "disabled", "over-the-bound"],
)
def test_full_path_when_memo_does_not_apply(tools: list[dict[str, object]], max_tools: int) -> None:
    dec = RequestDecoder(SETTINGS, max_tools=max_tools)
    dec.decode(body(tools=tools))
    assert dec.decode(body(tools=tools)).catalog_key in (
        None,
        dec.decode(body(tools=tools)).catalog_key,
    )
    assert len(dec._items) == 0
