"""Built catalogs kept across requests, found once per request.

``CatalogStore``: an LRU of ``CatalogEntry`` bounded by the total tools held. An entry keeps
the built ``Catalog`` (texts, BM25 index) and, once every tool is embedded, the stacked
embedding matrix per model. ``find`` is the one lookup a request makes: by the key its tool
list came with (a hash of the raw bytes, see ``decoding``), and on a miss by the fingerprint
of the decoded tools, so a catalog warmed from a file or sent in other bytes is reused, not
rebuilt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import msgspec
import numpy as np

from tool_selector.embeddings.cache import embedding_key
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import ToolSource
from tool_selector.ranking.catalog import Catalog, dedupe
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.text import TEXT_FORMAT_VERSION, ToolText
from tool_selector_client.wire import Tool

_ENCODE = msgspec.json.Encoder(order="deterministic")
#: Bytes of derived arrays (filter masks, context signals) kept per catalog: ``MEMO_BYTES_A_TOOL``
#: a tool, at least ``MEMO_MIN_BYTES`` and at most ``MEMO_BYTES`` (300 KB holds about 120
#: conversations' signals at 300 tools; 1 MiB, 30 at 4,000), each entry weighing at least
#: ``MEMO_ENTRY_BYTES`` (its key, its dict and tuple: a flood of distinct filters or
#: conversations on a catalog of ten tools kept 16,000 entries, 1.3 MB a request with long
#: keys, before the keys were digests and entries weighed their overhead).
MEMO_BYTES = 1 << 20
MEMO_BYTES_A_TOOL = 1024
MEMO_MIN_BYTES = 16 * 1024
MEMO_ENTRY_BYTES = 1024
#: A catalog's distinct terms that weigh as much as one tool in the catalog cache's bound
#: (``_weight``): real catalogs hold 2-10 terms a tool (the bench sets), one of random words
#: 1,455 a tool (300 MB for 480 tools, where the bound counted 480).
TERMS_A_TOOL = 8
T = TypeVar("T")


def fingerprint(unique_tools: Sequence[Tool]) -> str:
    """Identity of a deduplicated tool list: blake2b of its canonical JSON (order matters)."""
    return hashlib.blake2b(_ENCODE.encode(unique_tools), digest_size=16).hexdigest()


@dataclass(slots=True)
class CatalogEntry:
    """A built catalog plus what reuse adds: dense texts, embedding keys and matrix per model.

    ``duplicates``: tool entries dropped (duplicate names) from the list it was built from;
    a request resending that list byte for byte has the same number.
    """

    catalog: Catalog
    dense_texts: list[str]
    duplicates: int = 0
    _keys: dict[str, list[bytes]] = field(default_factory=dict)
    _matrices: dict[str, FloatArray] = field(default_factory=dict)
    _memo: BoundedLRU[tuple[object, ...], object] = field(
        default_factory=lambda: BoundedLRU(MEMO_BYTES, _nbytes)
    )
    #: Distinct terms of the catalog's lexical index (its weight in the cache, ``_weight``).
    terms: int = 0
    _texts: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, catalog: Catalog, duplicates: int = 0) -> CatalogEntry:
        memo = min(MEMO_BYTES, max(MEMO_MIN_BYTES, MEMO_BYTES_A_TOOL * len(catalog)))
        return cls(
            catalog=catalog,
            dense_texts=[t.dense_text() for t in catalog.texts],
            duplicates=duplicates,
            _memo=BoundedLRU(memo, _nbytes),
            terms=catalog.index.size_of_vocabulary(),
        )

    def alias(self, duplicates: int) -> CatalogEntry:
        """The same built catalog for another byte-level spelling of its tool list.

        Texts, index, embedding keys and matrices are shared (a matrix set on one is set on
        both); only the duplicate count, which belongs to a list's own bytes, is its own.
        """
        return replace(self, duplicates=duplicates)

    def texts(self, model_id: str) -> list[str]:
        """The tool texts ``model_id`` embeds: ``dense_texts`` unless ``read_as`` said other."""
        return self._texts.get(model_id, self.dense_texts)

    def read_as(self, model_id: str, text_of: Callable[[ToolText], str]) -> None:
        """Have ``model_id`` embed ``text_of`` each tool (once per entry) in place of its
        dense text; its keys follow."""
        if model_id not in self._texts:
            self._texts[model_id] = [text_of(t) for t in self.catalog.texts]

    def keys(self, model_id: str) -> list[bytes]:
        """Embedding-cache keys of the tool texts for ``model_id`` (computed once)."""
        keys = self._keys.get(model_id)
        if keys is None:
            keys = [embedding_key(model_id, TEXT_FORMAT_VERSION, t) for t in self.texts(model_id)]
            self._keys[model_id] = keys
        return keys

    def memo(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """What ``compute`` derives from this catalog for ``key`` (a caller's filters, a
        conversation's context), kept for the next requests that send the same: a proxy
        resends its policy and its conversation with every search of a turn. At most
        ``MEMO_BYTES`` of arrays per catalog, least recent dropped; lost with the catalog."""
        found = self._memo.get(key)
        if found is None:
            found = compute()
            self._memo.put(key, found)
        return found  # type: ignore[return-value]

    def matrix(self, model_id: str) -> FloatArray | None:
        return self._matrices.get(model_id)

    def set_matrix(self, model_id: str, matrix: FloatArray) -> None:
        matrix.setflags(write=False)
        self._matrices[model_id] = matrix


@dataclass(frozen=True, slots=True)
class Found:
    """What ``CatalogStore.find`` found: the entry, the key it is stored under, whether it was
    built before this request, and the duplicate tools of this request's own list."""

    entry: CatalogEntry
    key: str
    reused: bool
    duplicates: int


class CatalogStore:
    """LRU of ``CatalogEntry`` by key, bounded by the total tools held (0 = off)."""

    def __init__(self, max_tools: int) -> None:
        self._entries: BoundedLRU[str, CatalogEntry] = BoundedLRU(max_tools, _weight)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> CatalogEntry | None:
        """The entry stored under ``key`` (the background jobs hand their matrix to it)."""
        return self._entries.get(key)

    def find(self, tools: ToolSource, build: Callable[[list[Tool]], Catalog]) -> Found:
        """The entry for ``tools``: under ``tools.key`` (not decoding them), else under their
        fingerprint (aliased under ``tools.key`` for next time), else built and stored.

        The fingerprint costs 0.8 ms for 300 tools and 12.5 ms for 4,000, against 42 and
        421 ms to build. Two threads building the same catalog keep the first one stored.
        """
        if tools.key is not None:
            entry = self._entries.get(tools.key)
            if entry is not None:
                return Found(entry, tools.key, True, entry.duplicates)
        unique, duplicates = dedupe(tools.load())
        own = fingerprint(unique)
        key = tools.key or own
        known = self._entries.get(own)
        if known is not None:
            if key == own:
                return Found(known, key, True, duplicates)
            return Found(self._entries.put_new(key, known.alias(duplicates)), key, True, duplicates)
        entry = CatalogEntry.of(build(unique), duplicates)
        return Found(self._entries.put_new(key, entry), key, False, duplicates)


def _nbytes(value: object) -> int:
    """What a memoised value weighs: the bytes of the arrays in it, at least
    ``MEMO_ENTRY_BYTES``."""
    parts = value if isinstance(value, tuple) else (value,)
    return max(MEMO_ENTRY_BYTES, sum(p.nbytes for p in parts if isinstance(p, np.ndarray)))


def _weight(entry: CatalogEntry) -> int:
    """An entry's share of the bound: its tools, or its distinct terms by ``TERMS_A_TOOL``
    when they weigh more, and at least 1 (empty catalogs cost memory too: counted as 0,
    distinct empty lists could fill the cache without limit)."""
    return max(1, len(entry.catalog), entry.terms // TERMS_A_TOOL)


def stack(rows: Sequence[FloatArray | None], dim: int) -> FloatArray:
    """Rows stacked into one (n, dim) float32 matrix; ``None`` rows become zeros."""
    matrix = np.zeros((len(rows), dim), dtype=np.float32)
    for i, vec in enumerate(rows):
        if vec is not None:
            matrix[i] = vec
    return matrix
