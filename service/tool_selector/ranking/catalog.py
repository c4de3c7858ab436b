"""A catalog: the deduplicated tools of one request, with everything derived from their text.

Built once per distinct tool set; everything here depends on the tools only, never on the
query, so it can be reused across requests (see ``tool_selector.catalogs``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tool_selector.ranking.bm25 import FieldWeights, LexicalIndex, document_tokens
from tool_selector.ranking.text import ToolText, tool_text
from tool_selector.ranking.tokenize import terms
from tool_selector_client.wire import Tool

_SEPARATORS = re.compile(r"[\s_\-./:]+")


def normalise_name(name: str) -> str:
    """Case/separator-insensitive form of a name (``Create Issue`` == ``create_issue``).

    Unicode case folding, not ``lower()``: ``STRASSE`` names ``straße``.
    """
    return _SEPARATORS.sub("_", name.strip().casefold()).strip("_")


#: Shortest normalised name that a one-edit typo may match.
MIN_TYPO_CHARS = 5


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by exactly one insertion, deletion or substitution."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i:] == b[i + 1 :]


def dedupe(tools: Sequence[Tool]) -> tuple[list[Tool], int]:
    """Tools with duplicate names merged (first occurrence wins), and how many were dropped."""
    seen: set[str] = set()
    unique: list[Tool] = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            unique.append(tool)
    return unique, len(tools) - len(unique)


@dataclass(frozen=True, slots=True)
class Catalog:
    """Texts, BM25 index (with term coverage) and exact-name lookup of a deduplicated tool list.

    Catalogs live long in the catalog cache, so what they hold is chosen to be invisible to
    the garbage collector (untracked structs, str tuples, numpy arrays, atomic dicts): a full
    GC pass then costs the same however many catalogs are cached.
    """

    texts: tuple[ToolText, ...]
    index: LexicalIndex
    by_name: dict[str, tuple[int, ...]] = field(repr=False)
    positions: dict[str, int] = field(repr=False)
    name_words: frozenset[str] = field(default=frozenset(), repr=False)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.texts]

    def __len__(self) -> int:
        return len(self.texts)

    def exact_matches(self, pattern: str) -> tuple[int, ...]:
        """Tools the pattern names exactly: full name or bare name, case/separator-insensitive."""
        return self.by_name.get(normalise_name(pattern), ())

    def near_matches(self, pattern: str) -> tuple[int, ...]:
        """Tools whose full or bare name is one edit (typo) from a name-like pattern.

        Only single-word patterns of at least ``MIN_TYPO_CHARS`` characters qualify, so
        short words never match a short name by accident; and a plain word that is itself a
        word of some tool's name is a keyword, not a typo (``email`` does not lift ``gmail``
        above ``send_email``).
        """
        key = normalise_name(pattern)
        if len(key) < MIN_TYPO_CHARS or any(c.isspace() for c in pattern.strip()):
            return ()
        if "_" not in key and set(terms(key)) <= self.name_words:
            return ()
        hits: set[int] = set()
        for name, idx in self.by_name.items():
            if len(name) >= MIN_TYPO_CHARS and one_edit_apart(key, name):
                hits.update(idx)
        return tuple(sorted(hits))


def build_catalog(unique_tools: Sequence[Tool], weights: FieldWeights | None = None) -> Catalog:
    """Derive the catalog of already-deduplicated tools."""
    weights = weights or FieldWeights()
    texts = tuple(tool_text(t) for t in unique_tools)
    docs = [document_tokens(t, weights) for t in texts]
    by_name: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        for key in {normalise_name(text.name), normalise_name(text.bare_name)}:
            if key:
                by_name.setdefault(key, []).append(i)
    return Catalog(
        texts=texts,
        index=LexicalIndex(docs),
        by_name={k: tuple(v) for k, v in by_name.items()},
        positions={t.name: i for i, t in enumerate(texts)},
        name_words=frozenset(w for t in texts for w in t.name_tokens()),
    )
