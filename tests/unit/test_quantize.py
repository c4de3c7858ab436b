"""``offline/quantize.py``: MiniLM's float weights made int8 per channel, the same bytes
every time, the outputs those of the float model within quantization error."""

from __future__ import annotations

import hashlib

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto

from tests.fakes import stored_as_int8
from tool_selector.embeddings.models import MINILM, default_model_dir
from tool_selector.offline.quantize import quantize


def _run(data: bytes, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def test_the_weights_become_integer_products_with_the_same_outputs() -> None:
    source = stored_as_int8()
    made = quantize(source)
    graph = onnx.load_from_string(made).graph
    stored = {i.name: i for i in graph.initializer}
    (product,) = [n for n in graph.node if n.op_type == "MatMulInteger"]
    weight = stored[product.input[1]]  # folded and quantized once, not cast at run time
    assert (weight.data_type, list(weight.dims)) == (TensorProto.INT8, [64, 32])
    assert list(stored[product.input[3]].dims) == [32]  # a zero point per output channel
    assert "MatMul" not in {n.op_type for n in graph.node}
    x = np.random.default_rng(1).standard_normal((5, 64)).astype(np.float32)
    want, got = _run(source, x), _run(made, x)
    cosine = (want * got).sum(1) / np.linalg.norm(want, axis=1) / np.linalg.norm(got, axis=1)
    assert cosine.min() > 0.99


def test_quantizing_twice_gives_the_same_bytes() -> None:
    source = stored_as_int8()
    assert quantize(source) == quantize(source)


def test_the_placed_minilm_is_the_rows_quantized_file() -> None:
    """What ``make install`` placed is the quantized file the row names (integer products),
    not the wheel's member."""
    path = MINILM.path(default_model_dir(MINILM), "model.onnx")
    if not path.is_file():
        pytest.skip("MiniLM not placed (make install places it)")
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == MINILM.files["model.onnx"][1]
    assert MINILM.files["model.onnx"][1] != MINILM.derived["model.onnx"][1]
    ops = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert "MatMulInteger" in ops or "DynamicQuantizeMatMul" in ops
