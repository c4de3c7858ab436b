"""A decoder's error as the code a caller reads, whichever msgspec release raised it."""

from __future__ import annotations

import msgspec
import pytest

from tool_selector.errors import BadRequest, bad_request
from tool_selector.pipeline.decoding import Decoder
from tool_selector.settings import Settings
from tool_selector_client.wire import SEARCH_PATH


def _code(exc: Exception) -> str:
    return bad_request(exc).code


def test_bytes_that_are_not_utf8_are_invalid_utf8_from_the_decoder_installed() -> None:
    with pytest.raises(BadRequest) as caught:
        Decoder(Settings()).decode(b'{"pattern": "\xff\xfe", "tools": []}', SEARCH_PATH)
    assert caught.value.code == "invalid_utf8"
    assert "UTF-8" in caught.value.detail


def test_either_release_s_utf8_error_is_invalid_utf8() -> None:
    older = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    assert _code(older) == "invalid_utf8"
    assert _code(msgspec.DecodeError("Invalid UTF-8 encoded string")) == "invalid_utf8"


def test_other_decode_errors_keep_their_codes() -> None:
    assert _code(msgspec.DecodeError("Input data was truncated")) == "malformed_json"
    invalid = msgspec.ValidationError("Expected `str`, got `int` - at `$.pattern`")
    assert _code(invalid) == "invalid_request"
