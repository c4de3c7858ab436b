"""Tokenisation shared by BM25, name matching and the keyword reference scorer."""

from __future__ import annotations

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")

#: English function words that carry no retrieval signal.
STOP_WORDS = frozenset(
    """a an and are as at be but by can could do does for from get give has have how i if in
    into is it its me my of on or our please should so that the their them then there these
    this to us use using want was we what when where which who will with would you your""".split()
)


def split_identifier(text: str) -> list[str]:
    """Split camelCase, snake_case, kebab, dotted and slashed identifiers into lowercase words."""
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text))]


def tokenize(text: str) -> list[str]:
    """Words of ``text`` for lexical scoring: identifiers split, lowercased, stop words dropped."""
    return [w for w in split_identifier(text) if w not in STOP_WORDS]
