"""Redacted patterns: a keyed hash, stable under one key, unguessable without it."""

from __future__ import annotations

import hashlib

from tool_selector.logs import Redactor


def test_the_same_key_gives_the_same_stand_in() -> None:
    assert Redactor("k")("send mail") == Redactor("k")("send mail")


def test_without_a_key_each_process_draws_its_own() -> None:
    assert Redactor()("send mail") != Redactor()("send mail")


def test_the_stand_in_is_not_the_plain_hash() -> None:
    plain = hashlib.sha256(b"send mail").hexdigest()[:12]
    assert plain not in Redactor("k")("send mail")


def test_the_words_never_appear() -> None:
    assert Redactor("k")("send mail").startswith("<redacted len=9 hmac=")
