"""The int8 ONNX encoder agrees with the full model and keeps its own cache identity."""

from __future__ import annotations

import numpy as np
import pytest

from tool_selector.embeddings.encoder import SentenceTransformerEncoder
from tool_selector.embeddings.onnx import BATCH_TEXTS, PAD_SLACK, OnnxEncoder, length_groups

TEXTS = [
    "send_message: Post a message to a Slack channel",
    "read_file: Read a file from disk. path: the file to read",
    "find files with auth middleware",
    "weather",
]


@pytest.mark.model
def test_onnx_vectors_match_the_full_model() -> None:
    full, quant = SentenceTransformerEncoder().encode(TEXTS), OnnxEncoder().encode(TEXTS)
    assert np.min(np.sum(full * quant, axis=1)) > 0.98


@pytest.mark.model
def test_onnx_rows_are_unit_length_in_input_order() -> None:
    enc = OnnxEncoder()
    batch = enc.encode(TEXTS)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(batch[2], enc.encode([TEXTS[2]])[0], atol=1e-4)


@pytest.mark.model
def test_onnx_model_id_differs_from_the_full_model() -> None:
    assert OnnxEncoder().model_id != SentenceTransformerEncoder().model_id


def _same_texts_in_order(together: np.ndarray, alone: np.ndarray) -> None:
    """Row i of a batch is text i's vector: within the quantization's reach of the text
    alone (MiniLM's activations are quantized per run, so a batch's range moves a text's
    vector a little: cosine 0.989 at worst on Seal-Tools descriptions) and nearer it than
    any other text alone."""
    cosines = together @ alone.T
    assert np.diag(cosines).min() > 0.98
    assert (cosines.argmax(axis=1) == np.arange(len(alone))).all()


def test_onnx_batches_on_two_threads_match_single_texts() -> None:
    encoder = OnnxEncoder(batch_threads=2)
    texts = [f"tool {i}: read, write or archive record number {i}" for i in range(BATCH_TEXTS)]
    together = encoder.encode(texts)  # the two-thread batch session
    alone = np.vstack([encoder.encode([t]) for t in texts])  # the one-thread session
    _same_texts_in_order(together, alone)
    assert np.array_equal(together, encoder.encode(texts))  # the same batch, the same bytes


@pytest.mark.parametrize(
    ("lengths", "most", "groups"),
    [
        ([], 32, []),
        ([7], 32, [[0]]),
        ([50, 10, 11, 52], 32, [[1, 2], [0, 3]]),
        ([10, 10, 10], 2, [[0, 1], [2]]),
        ([3, 300, 40], 32, [[0], [2], [1]]),
    ],
    ids=["none", "one", "two-lengths", "capped", "far-apart"],
)
def test_length_groups_split_by_length(
    lengths: list[int], most: int, groups: list[list[int]]
) -> None:
    assert length_groups(lengths, most) == groups


def test_length_groups_bound_padding() -> None:
    lengths = [(i * 37) % 200 + 5 for i in range(300)]
    groups = length_groups(lengths, 16)
    assert sorted(i for g in groups for i in g) == list(range(300))
    for g in groups:
        real = sum(lengths[i] for i in g)
        assert len(g) <= 16
        assert len(g) * max(lengths[i] for i in g) <= PAD_SLACK * real


def test_onnx_mixed_lengths_keep_input_order() -> None:
    encoder = OnnxEncoder()
    texts = [f"tool {i}: " + "archive the record " * (i % 5 * 9) for i in range(BATCH_TEXTS)]
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    _same_texts_in_order(together, alone)
