"""A catalog: the deduplicated tools of one request, with everything derived from their text.

Built once per distinct tool set; everything here depends on the tools only, never on the
query, so it can be reused across requests (see ``tool_selector.pipeline.catalog_store``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from tool_selector.ranking.bm25 import FieldWeights, LexicalIndex, document_tokens, postings
from tool_selector.ranking.controls import Traits
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.text import ToolText, tool_text
from tool_selector.ranking.tokenize import fold, lexical_words, name_words, stem
from tool_selector_client.wire import Tool

_SEPARATORS = re.compile(r"[\s_\-./:]+")


def normalise_name(name: str) -> str:
    """Case/separator-insensitive form of a name (``Create Issue`` == ``create_issue``).

    Unicode case folding, not ``lower()``: ``STRASSE`` names ``straße``; accents folded
    (``tokenize.fold``): ``resume`` names ``résumé``.
    """
    return _SEPARATORS.sub("_", fold(name.strip()).casefold()).strip("_")


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


class NameIndex:
    """Which tools' bare names hold each name word (``tokenize.name_words``), and name sizes.

    Numpy arrays and a ``str -> int`` dict only, like ``LexicalIndex``: invisible to the GC.
    """

    def __init__(self, names: Sequence[Sequence[str]]) -> None:
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(w, len(vocab)) for w in words] for words in names]
        self._vocab = vocab
        self._indptr, self._docs = postings(ids, len(vocab))
        self._sizes = np.array([max(len(w), 1) for w in names], dtype=np.float32)

    def match(
        self,
        words: Sequence[str],
        weights: Sequence[float],
        joins: Sequence[tuple[str, str]] | None = None,
    ) -> FloatArray:
        """Per tool, the F1 of how much of its name the pattern says and of the pattern it says.

        ``F1 = 2 a b / (a + b)`` with ``a`` = share of the tool's name words found among
        ``words`` and ``b`` = ``weights``-weighted share of ``words`` found in its name
        (precision and recall of the name against the pattern; van Rijsbergen's F-measure).
        Two adjacent words also match a name word spelled as one (``function app`` meets
        ``functionapp``, ``key vault`` meets ``keyvault``), with both words' weight: the
        pairs ``joins`` names (``tokenize.name_joins``), else adjacent ``words``.
        """
        hits = np.zeros(len(self._sizes), dtype=np.float32)
        said = np.zeros(len(self._sizes), dtype=np.float32)
        weight_of = dict(zip(words, weights, strict=True))
        pairs = list(pairwise(words)) if joins is None else joins
        joined = [
            (a + b, weight_of.get(a, 0.0) + weight_of.get(b, 0.0))
            for a, b in pairs
            if a + b in self._vocab
        ]
        for word, weight in [*zip(words, weights, strict=True), *joined]:
            j = self._vocab.get(word)
            if j is not None:
                docs = self._docs[self._indptr[j] : self._indptr[j + 1]]
                hits[docs] += 1.0
                said[docs] += weight
        a = np.minimum(hits / self._sizes, 1.0)
        total = float(sum(weights))
        b = np.minimum(said / total, 1.0) if total > 0 else said
        both = a + b
        return np.asarray(np.where(both > 0, 2 * a * b / np.maximum(both, 1e-9), 0.0), np.float32)


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
    #: The keys of ``by_name`` a typo may name (``MIN_TYPO_CHARS`` - 1 or longer), by length:
    #: ``near_matches`` reads only those a character shorter, as long or a character longer.
    typo_names: dict[int, tuple[str, ...]] = field(default_factory=dict, repr=False)
    name_words: frozenset[str] = field(default=frozenset(), repr=False)
    name_index: NameIndex = field(default_factory=lambda: NameIndex(()), repr=False)
    traits: Traits = field(default_factory=lambda: Traits.of(()), repr=False)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.texts]

    def __len__(self) -> int:
        return len(self.texts)

    def name_match(
        self, words: Sequence[str], joins: Sequence[tuple[str, str]] | None = None
    ) -> FloatArray:
        """Per tool, how well its bare name and the pattern's ``words`` match (see NameIndex).

        Each pattern word weighs its BM25 IDF in this catalog, so a name sharing only a
        word most tools have (``get``) matches less than one sharing a rare word.
        """
        return self.name_index.match(words, [self.index.idf(w) for w in words], joins)

    def exact_matches(self, pattern: str) -> tuple[int, ...]:
        """Tools the pattern names exactly: full name or bare name, case/separator-insensitive."""
        return self.by_name.get(normalise_name(pattern), ())

    def near_matches(self, pattern: str) -> tuple[int, ...]:
        """Tools whose full or bare name is one edit (typo) from a name-like pattern.

        Only single-word patterns of at least ``MIN_TYPO_CHARS`` characters qualify, so
        short words never match a short name by accident (a name may be one character
        shorter: ``Grepp`` names ``Grep``); and a plain word whose singular is a word of
        some tool's name is a keyword, not a typo (``email`` does not lift ``gmail`` above
        ``send_email``).
        """
        key = normalise_name(pattern)
        if len(key) < MIN_TYPO_CHARS or any(c.isspace() for c in pattern.strip()):
            return ()
        if "_" not in key and {stem(w) for w in lexical_words(key)} <= self.name_words:
            return ()
        hits: set[int] = set()
        for size in (len(key) - 1, len(key), len(key) + 1):
            for name in self.typo_names.get(size, ()):
                if one_edit_apart(key, name):
                    hits.update(self.by_name[name])
        return tuple(sorted(hits))


def build_catalog(unique_tools: Sequence[Tool], weights: FieldWeights | None = None) -> Catalog:
    """Derive the catalog of already-deduplicated tools."""
    weights = weights or FieldWeights()
    texts = tuple(tool_text(t) for t in unique_tools)
    names = [t.name_tokens() for t in texts]
    docs = [document_tokens(t, weights, name) for t, name in zip(texts, names, strict=True)]
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
        typo_names=_by_length(k for k in by_name if len(k) >= MIN_TYPO_CHARS - 1),
        name_words=frozenset(w for name in names for w in name),
        name_index=NameIndex([name_words(t.bare_name) for t in texts]),
        traits=Traits.of(unique_tools),
    )


def _by_length(names: Iterable[str]) -> dict[int, tuple[str, ...]]:
    """``names`` grouped by their length, each group in the order given."""
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(len(name), []).append(name)
    return {size: tuple(group) for size, group in groups.items()}
