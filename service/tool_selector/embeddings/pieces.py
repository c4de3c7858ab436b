"""How a static table reads a text: its words, their pieces, and the sparse matrix of them.

Shared by the static encoder (``embeddings/static.py``) and the fit of a table to its model
(``embeddings/refit.py``), so the fit moves the rows for the texts exactly as they are read.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix  # type: ignore[import-untyped]

#: BERT's pre-tokeniser's words, lower-cased first (punctuation and ``_`` split and dropped).
WORD = re.compile(r"[^\W_]+")
#: Longest text looked at, in tokens (a lookup per token: cheap, but bounded).
MAX_TOKENS = 512

#: The word-piece ids of each of a set of words, as int32 bytes.
PiecesOf = Callable[[set[str]], Mapping[str, bytes]]


def piece_matrix(texts: Sequence[str], pieces_of: PiecesOf, vocabulary: int) -> Any:
    """One sparse float32 row per text holding a 1 per word piece of its first
    ``MAX_TOKENS``, in the text's order, a repeated piece as often as it comes (duplicates
    are not merged); ``IndexError`` for a piece past ``vocabulary`` (a product with it reads
    rows unchecked)."""
    words = [WORD.findall(text.lower()) for text in texts]
    known = pieces_of(set(itertools.chain.from_iterable(words)))
    packed = [b"".join([known[w] for w in ws])[: 4 * MAX_TOKENS] for ws in words]
    ids = np.frombuffer(b"".join(packed), dtype=np.int32)
    if len(ids) and int(ids.max()) >= vocabulary:
        raise IndexError(f"word piece {int(ids.max())} past the table's {vocabulary} rows")
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(piece) // 4 for piece in packed], out=indptr[1:])
    ones = np.ones(len(ids), dtype=np.float32)
    return csr_matrix((ones, ids, indptr), shape=(len(texts), vocabulary))
