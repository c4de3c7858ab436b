"""A lone UTF-16 surrogate escape reads as U+FFFD; everything else stays byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tool_selector.offline.tool_file import load_tools
from tool_selector.pipeline.surrogates import decode_text, mend_surrogates
from tool_selector.pipeline.warmup import read_warmup

# The bodies are written as raw bytes: b"\\ud83d" is the six bytes \ud83d a JSON text holds.
CASES: list[tuple[bytes, bytes]] = [
    (b'"send a slack message \\ud83d"', b'"send a slack message \\ufffd"'),
    (b'"\\ude00 tail"', b'"\\ufffd tail"'),
    (b'"\\uD83D"', b'"\\ufffd"'),
    (b'"\\ud83d\\ude00"', b'"\\ud83d\\ude00"'),
    (b'"\\uD83D\\uDE00"', b'"\\uD83D\\uDE00"'),
    (b'"\\ude00\\ud83d"', b'"\\ufffd\\ufffd"'),
    (b'"\\ud83d\\ud83d\\ude00"', b'"\\ufffd\\ud83d\\ude00"'),
    (b'"\\ud83d\\u0041"', b'"\\ufffd\\u0041"'),
    (b'"\\\\ud83d"', b'"\\\\ud83d"'),
    (b'"\\\\\\ud83d"', b'"\\\\\\ufffd"'),
    (b'"\\\\\\\\ud83d"', b'"\\\\\\\\ud83d"'),
    (b'"a \\u003c b \\u00e9"', b'"a \\u003c b \\u00e9"'),
    (b'"\\ud83dx"', b'"\\ufffdx"'),
    (b'{"a":["\\udbff"],"\\udc00":1}', b'{"a":["\\ufffd"],"\\ufffd":1}'),
    (b'"no escapes at all"', b'"no escapes at all"'),
]


@pytest.mark.parametrize(
    ("sent", "mended"),
    CASES,
    ids=[
        "cut-emoji-at-end",
        "lone-low",
        "upper-hex",
        "valid-pair",
        "valid-pair-upper",
        "pair-reversed",
        "high-then-pair",
        "high-then-bmp-escape",
        "escaped-backslash",
        "backslash-then-escape",
        "two-escaped-backslashes",
        "other-escapes",
        "high-then-letter",
        "keys-and-nesting",
        "plain",
    ],
)
def test_mend_surrogates(sent: bytes, mended: bytes) -> None:
    assert mend_surrogates(sent) == mended


def test_the_mended_text_decodes_with_the_replacement_character() -> None:
    body = mend_surrogates(b'{"pattern": "send a slack message \\ud83d"}')
    assert msgspec.json.decode(body) == {"pattern": "send a slack message \ufffd"}


def test_bytes_without_a_surrogate_escape_are_returned_as_they_are() -> None:
    body = b'{"pattern": "x \\u00e9"}'
    assert mend_surrogates(body) is body


# Text without surrogates (what valid UTF-8 JSON can hold), and JSON values made of it.
_TEXT = st.text(st.characters(exclude_categories=("Cs",)))
_JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(_JSON, st.booleans())
def test_valid_json_without_lone_surrogates_stays_byte_identical(
    value: Any, ascii_only: bool
) -> None:
    body = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert mend_surrogates(body) == body


@given(st.text(st.characters(codec="utf-16", categories=("Cs", "Ll", "Nd", "So", "Zs", "Po"))))
def test_any_text_reads_as_a_utf16_decoder_reads_it(text: str) -> None:
    """Python writes lone surrogates as escapes (as ``JSON.stringify`` does); after the
    mend the text decodes as UTF-16 with replacement would: pairs joined, lone ones U+FFFD."""
    expected = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    assert msgspec.json.decode(mend_surrogates(json.dumps(text).encode())) == expected


CUT_TOOL = '{"name": "slack_\\ud83d", "description": "Post \\ud83d"}'


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (f"[{CUT_TOOL}]", lambda p: [t["name"] for t in load_tools(p)]),
        (f"{CUT_TOOL}\n", lambda p: [t["name"] for t in load_tools(p)]),
        (f'{{"tools": [{CUT_TOOL}]}}\n', lambda p: [t.name for t in read_warmup(p)[0]]),
    ],
    ids=["tool-file-json", "tool-file-jsonl", "warm-up-file"],
)
def test_files_of_tools_read_text_as_the_service_does(
    tmp_path: Path, text: str, read: Callable[[Path], list[str]]
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(text)
    assert read(path) == ["slack_\ufffd"]


@pytest.mark.parametrize(
    ("body", "decoded", "calls"),
    [
        (b'"a \\u00e9"', "a \u00e9", 1),
        (b'"a \\ud83d"', "a \ufffd", 2),
    ],
    ids=["valid-decoded-once", "lone-decoded-again-mended"],
)
def test_decode_text(body: bytes, decoded: str, calls: int) -> None:
    seen: list[bytes] = []

    def decode(b: bytes) -> Any:
        seen.append(b)
        return msgspec.json.decode(b)

    assert (decode_text(decode, body, (msgspec.DecodeError,)), len(seen)) == (decoded, calls)


def test_decode_text_keeps_the_error_of_a_body_without_a_surrogate() -> None:
    with pytest.raises(msgspec.DecodeError, match="truncated"):
        decode_text(msgspec.json.decode, b'{"a": ', (msgspec.DecodeError,))
