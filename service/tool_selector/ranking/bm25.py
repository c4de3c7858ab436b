"""BM25 over tool text, via ``bm25s`` (sparse-matrix BM25; ~100x faster than ``rank_bm25``).

Score (Lucene variant, Robertson & Zaragoza 2009; bm25s ``method="lucene"``):
``sum_t idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``, which never goes negative, so a term
shared by most tools of a small catalog still counts a little instead of penalising.
Field weighting is by repetition: name words count ``name_weight`` times (BM25F-lite).

The n-grams of unsegmented text (``tokenize.is_ngram``: Han, kana, Hangul, Thai bigrams)
are a field of their own, scored over the documents holding any (their own lengths, average
length and document count, as a Lucene field) and added to the words' score, as Lucene adds
a multi-field query's fields. Counted with the words, a run's bigram per character made a
tool described in Chinese several times longer than its words and moved every tool's
``|d| / avgdl``: a query of words now scores exactly as over the words alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import bm25s
import numpy as np
import numpy.typing as npt

from tool_selector.ranking.text import ToolText
from tool_selector.ranking.tokenize import is_ngram, subword

FloatArray = npt.NDArray[np.float32]
#: One BM25 field of a corpus: its documents' term ids, its vocabulary, and which documents
#: of the corpus its documents are (every one, in order, when None).
FieldParts = tuple[list[list[int]], dict[str, int], npt.NDArray[np.intp] | None]


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """How many times each field's words are repeated in the BM25 document."""

    name: int = 3
    namespace: int = 1
    description: int = 1
    params: int = 1


def document_tokens(
    text: ToolText, weights: FieldWeights, name: list[str] | None = None
) -> list[str]:
    """The BM25 document of one tool: its fields' words, each field repeated by weight
    (search-only text weighs as the description). ``name``: its ``name_tokens()``, when
    the caller has read them already."""
    return (
        (text.name_tokens() if name is None else name) * weights.name
        + text.namespace_tokens() * weights.namespace
        + (text.description_tokens() + text.search_tokens()) * weights.description
        + text.param_tokens() * weights.params
    )


class LexicalIndex:
    """A BM25 index over one catalog's tool documents, plus which documents hold each term.

    The vocabulary is built once here: bm25s indexes the same token ids, and a CSR postings
    table (term -> sorted document ids) answers coverage ("how many query terms does each
    tool contain"). Everything it keeps is numpy arrays and a ``str -> int`` dict, which the
    garbage collector does not track, so a cache full of catalogs costs a full GC pass
    nothing (a frozenset per tool cost about 1 ms per 300 tools in every full pass).

    ``ngram_field``: the n-grams of unsegmented text as a field of their own (module
    docstring); false, every term in one field, as the eval's frozen references want.
    """

    def __init__(
        self,
        documents: Sequence[Sequence[str]],
        k1: float = 1.2,
        b: float = 0.75,
        method: str = "lucene",
        *,
        ngram_field: bool = True,
    ) -> None:
        self._size = len(documents)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in documents]
        self._vocab = vocab
        parts = _fields(ids, vocab) if ngram_field else [(ids, vocab, None)]
        self._fields = tuple(
            _Field(field_ids, field_vocab, rows, bm25s.BM25(k1=k1, b=b, method=method))
            for field_ids, field_vocab, rows in parts
        )
        self._indptr, self._docs = postings(ids, len(vocab))
        self._sub_vocab, self._sub_indptr, self._sub_docs = _subword_postings(
            vocab, self._indptr, self._docs, self._size
        )

    def __len__(self) -> int:
        return self._size

    def scores(self, query_tokens: Sequence[str]) -> FloatArray:
        """BM25 score of every document for the query, in document order (zeros if no overlap)."""
        out = np.zeros(self._size, dtype=np.float32)
        for field in self._fields:
            field.add_scores(query_tokens, out)
        return out

    def terms(self) -> list[str]:
        """Every term some document holds."""
        return list(self._vocab)

    def size_of_vocabulary(self) -> int:
        """How many distinct terms the documents hold."""
        return len(self._vocab)

    def idf(self, term: str) -> float:
        """BM25's ``ln(1 + (N - df + 0.5) / (df + 0.5))``; a term no tool holds has df 0."""
        docs = self._holders(term)
        df = 0 if docs is None else len(docs)
        return math.log1p((self._size - df + 0.5) / (df + 0.5))

    def idf_coverage(self, query_terms: Sequence[str]) -> FloatArray:
        """Per document, ``sum idf(t)`` over the query terms it holds / ``sum idf(t)`` over all.

        Lexical evidence that counts only when specific: a word most tools share weighs
        little, and a term no tool holds (an id, a value, a word of another product) still
        counts in the denominator, so one rare shared word in a long sentence stays a small
        share of it.
        """
        out = np.zeros(self._size, dtype=np.float64)
        total = 0.0
        for term in query_terms:
            weight = self.idf(term)
            total += weight
            docs = self._holders(term)
            if docs is not None:
                out[docs] += weight
        return np.asarray(out / total if total > 0 else out, dtype=np.float32)

    def subword_coverage(self, query_terms: Sequence[str]) -> FloatArray:
        """``idf_coverage`` over the terms cut to sub-words (``tokenize.subword``).

        Weaker evidence than a shared word, for what words miss: ``configuration`` against
        a tool that says ``config``. Each distinct sub-word weighs its own IDF (its
        document frequency among sub-words), so a stub most tools share counts little.
        """
        out = np.zeros(self._size, dtype=np.float64)
        total = 0.0
        indptr, holders = self._sub_indptr, self._sub_docs
        for part in dict.fromkeys(subword(t) for t in query_terms):
            j = self._sub_vocab.get(part)
            docs = holders[indptr[j] : indptr[j + 1]] if j is not None else holders[:0]
            weight = math.log1p((self._size - len(docs) + 0.5) / (len(docs) + 0.5))
            total += weight
            out[docs] += weight
        return np.asarray(out / total if total > 0 else out, dtype=np.float32)

    def explained(self, query_terms: Sequence[str], docs: npt.NDArray[np.intp]) -> float:
        """IDF-weighted share of ``query_terms`` that at least one of ``docs`` holds."""
        total = held = 0.0
        for term in query_terms:
            weight = self.idf(term)
            total += weight
            holders = self._holders(term)
            if holders is not None and len(holders) and _holds_any(holders, docs):
                held += weight
        return held / total if total > 0 else 0.0

    def coverage(self, query_terms: Sequence[str]) -> npt.NDArray[np.float64]:
        """Per document, the share of ``query_terms`` it contains (0 for no terms)."""
        counts = np.zeros(self._size, dtype=np.float64)
        if not query_terms:
            return counts
        for term in query_terms:
            docs = self._holders(term)
            if docs is not None:
                counts[docs] += 1.0
        return counts / len(query_terms)

    def holds(self, term: str) -> bool:
        """Whether any document holds ``term``."""
        docs = self._holders(term)
        return docs is not None and len(docs) > 0

    def matched(self, doc: int, query_terms: Sequence[str]) -> tuple[str, ...]:
        """The ``query_terms`` that document ``doc`` contains, in query order."""
        out = []
        for term in query_terms:
            docs = self._holders(term)
            if docs is not None and _holds(docs, doc):
                out.append(term)
        return tuple(out)

    def _holders(self, term: str) -> npt.NDArray[np.int32] | None:
        j = self._vocab.get(term)
        return None if j is None else self._docs[self._indptr[j] : self._indptr[j + 1]]


class _Field:
    """One BM25 field: a bm25s index over the documents ``rows`` (every one when None).

    Its own document lengths, average length and document count, as a Lucene field has
    (``avgdl`` and ``idf`` over the documents that hold the field).
    """

    __slots__ = ("bm25", "rows", "vocab")

    def __init__(
        self,
        ids: Sequence[Sequence[int]],
        vocab: dict[str, int],
        rows: npt.NDArray[np.intp] | None,
        bm25: bm25s.BM25,
    ) -> None:
        self.vocab = vocab
        self.rows = rows
        self.bm25 = bm25
        if vocab:  # bm25s cannot index a corpus without a single token
            self.bm25.index((ids, dict(vocab)), create_empty_token=False, show_progress=False)

    def add_scores(self, query_tokens: Sequence[str], out: FloatArray) -> None:
        """Add this field's BM25 score of every document for the query to ``out``."""
        known = [t for t in query_tokens if t in self.vocab]
        if not known:
            return
        scores = np.asarray(self.bm25.get_scores(known), dtype=np.float32)
        if self.rows is None:
            out += scores
        else:
            out[self.rows] += scores


def _fields(ids: list[list[int]], vocab: dict[str, int]) -> list[FieldParts]:
    """The BM25 fields of a corpus as ``(ids, vocab, rows)``: its words over every document,
    and, when some document holds unsegmented text, its n-grams (``tokenize.is_ngram``) over
    the documents holding them. One field, the corpus itself, when none does.

    A run of Han or kana gives a bigram per character: counted with the words, they made a
    Chinese-described tool's document several times longer, so BM25's length normalisation
    sank its English name words (livemcpbench lexical R@1 26.7 -> 24.6, test split).
    """
    gram = [is_ngram(t) for t in vocab]
    if not any(gram):
        return [(ids, vocab, None)]
    local, counts = [0] * len(gram), [0, 0]  # each term's id within its own field
    for j, is_gram in enumerate(gram):
        local[j] = counts[is_gram]
        counts[is_gram] += 1
    words = [[local[j] for j in doc if not gram[j]] for doc in ids]
    rows = [d for d, doc in enumerate(ids) if len(words[d]) < len(doc)]
    grams = [[local[j] for j in ids[d] if gram[j]] for d in rows]
    return [
        (words, {t: local[j] for t, j in vocab.items() if not gram[j]}, None),
        (grams, {t: local[j] for t, j in vocab.items() if gram[j]}, np.asarray(rows, np.intp)),
    ]


def _holds_any(sorted_docs: npt.NDArray[np.int32], docs: npt.NDArray[np.intp]) -> bool:
    at = np.minimum(np.searchsorted(sorted_docs, docs), len(sorted_docs) - 1)
    return bool((sorted_docs[at] == docs).any())


def _holds(sorted_docs: npt.NDArray[np.int32], doc: int) -> bool:
    at = int(np.searchsorted(sorted_docs, doc))
    return at < len(sorted_docs) and int(sorted_docs[at]) == doc


def _subword_postings(
    vocab: dict[str, int],
    indptr: npt.NDArray[np.int64],
    docs: npt.NDArray[np.int32],
    size: int,
) -> tuple[dict[str, int], npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """The term postings re-keyed by sub-word: ``(sub-word ids, indptr, docs)``, CSR."""
    sub_vocab: dict[str, int] = {}
    of_term = np.fromiter(
        (sub_vocab.setdefault(subword(t), len(sub_vocab)) for t in vocab),
        dtype=np.int64,
        count=len(vocab),
    )
    width = max(size, 1)
    sub_of_pair = np.repeat(of_term, np.diff(indptr))
    pairs = np.unique(sub_of_pair * width + docs)
    sub_indptr = np.searchsorted(pairs // width, np.arange(len(sub_vocab) + 1, dtype=np.int64))
    return sub_vocab, sub_indptr.astype(np.int64), (pairs % width).astype(np.int32)


def postings(
    ids: Sequence[Sequence[int]], terms: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """CSR of the distinct (term, document) pairs: ``docs[indptr[t]:indptr[t + 1]]``, sorted."""
    lengths = np.fromiter((len(d) for d in ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    doc_of = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    pairs = np.unique(flat * max(len(ids), 1) + doc_of)
    pair_terms = pairs // max(len(ids), 1)
    indptr = np.searchsorted(pair_terms, np.arange(terms + 1, dtype=np.int64))
    return indptr.astype(np.int64), (pairs % max(len(ids), 1)).astype(np.int32)
