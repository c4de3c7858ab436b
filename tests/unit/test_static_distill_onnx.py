"""bge-small-en-v1.5's static table, distilled from its ONNX row without torch
(``distill.distill_onnx``): deterministic, and each row the recipe's (the mean of the last
hidden states of ``[CLS] token [SEP]``, centred over the vocabulary, SIF-weighted)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

from tool_selector.embeddings import distill
from tool_selector.embeddings.models import BGE_SMALL, MINILM, default_model_dir
from tool_selector.embeddings.static import StaticEncoder

pytestmark = pytest.mark.model

#: The first tokens of the vocabulary: a small table, built in about a second.
SIZE = 48


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    first, second = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    for folder in (first, second):
        distill.distill_onnx(folder, BGE_SMALL, vocabulary=SIZE)
    return first, second


def test_two_builds_are_the_same_table(built: tuple[Path, Path]) -> None:
    first, second = built
    for name in ("vectors.npy", "weights.npy", "tokenizer.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    ids = [json.loads((f / "manifest.json").read_text())["id"] for f in built]
    assert ids[0] == ids[1]
    assert ids[0].startswith(f"{BGE_SMALL.name}-static-v{distill.RECIPE_VERSION}-")


def test_each_row_is_the_three_positions_mean_centred(built: tuple[Path, Path]) -> None:
    folder = default_model_dir(BGE_SMALL)
    session = onnxruntime.InferenceSession(str(folder / "model.onnx"))
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    ids = np.array([[vocab["[CLS]"], i, vocab["[SEP]"]] for i in range(SIZE)], np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
    inputs = {i.name for i in session.get_inputs()}
    rows = session.run(None, {k: v for k, v in feed.items() if k in inputs})[0].mean(axis=1)
    table = np.load(built[0] / "vectors.npy")
    assert table.dtype == np.float16
    np.testing.assert_allclose(table, rows - rows.mean(axis=0), atol=2e-2)
    weights = distill.sif_weights(SIZE, distill.ONNX_SIF_COEFFICIENT)
    np.testing.assert_array_equal(np.load(built[0] / "weights.npy"), weights)


def test_it_is_current_for_its_model_and_weights_only(built: tuple[Path, Path]) -> None:
    assert distill.is_current(built[0], BGE_SMALL.name, BGE_SMALL.weights_digest)
    assert not distill.is_current(built[0], MINILM.name)
    assert not distill.is_current(built[0], BGE_SMALL.name, "0" * 16)


def test_the_static_encoder_reads_it_under_its_id(built: tuple[Path, Path]) -> None:
    table = StaticEncoder(built[0], BGE_SMALL.name)
    assert table.model_id.startswith(BGE_SMALL.name)
    assert table.dim == BGE_SMALL.dim


def test_a_missing_table_names_the_command_for_its_model(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=f"distill-static --model {BGE_SMALL.name}"):
        StaticEncoder(tmp_path, BGE_SMALL.name)
