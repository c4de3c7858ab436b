"""The words that tell a tool apart from others, as an operator would write them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tool_selector.ranking.text import ToolText
from tool_selector.ranking.tokenize import STOP_WORDS, split_identifier

_WORD = re.compile(r"[^\W_]+")
#: Most words ``apart`` names per tool.
MAX_APART = 6


def tool_words(text: ToolText) -> list[str]:
    """A tool's distinct words in reading order: bare-name words, description, search text
    (lowercase, no stop words, no one-letter words)."""
    raw = split_identifier(text.bare_name)
    for field in (text.description, text.search_text):
        raw += [w.lower() for w in _WORD.findall(field)]
    return list(dict.fromkeys(w for w in raw if len(w) > 1 and w not in STOP_WORDS))


def apart(texts: Sequence[ToolText], group: Sequence[int]) -> dict[str, list[str]]:
    """Per tool of ``group``, the words of its text no other tool of the group has."""
    words = {i: tool_words(texts[i]) for i in group}
    out: dict[str, list[str]] = {}
    for i in group:
        others = {w for j in group if j != i for w in words[j]}
        out[texts[i].name] = [w for w in words[i] if w not in others][:MAX_APART]
    return out


def quoted(words: Sequence[str]) -> str:
    """``'a', 'b'`` (for fix sentences)."""
    return ", ".join(f"'{w}'" for w in words)
