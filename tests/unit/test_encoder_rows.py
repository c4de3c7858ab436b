"""One contract every ONNX encoder row meets (``embeddings.models.MODELS``), as fastembed
runs one test over every model it supports: a new row is a new parameter here, nothing else.

Each row loads from its files (digests checked) as unit vectors of its dimension, the same
text giving the same vector in any batch; its queries take its prefix; one pass reads a
pattern's clauses in context (``encode_spans``); its weights digest is its file's sha256;
and a retrieval query finds its tool."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from tool_selector.embeddings.encoder import encode_query
from tool_selector.embeddings.models import MODELS, OnnxModel, default_model_dir
from tool_selector.embeddings.onnx import OnnxEncoder

TEXTS = ["send_message: Post a message to a Slack channel", "read_file: Read a file", "weather"]
TOOLS = [
    "send_message: Post a message to a Slack channel",
    "read_file: Read a file from the local disk",
    "get_weather: Current weather and forecast for a city",
    "create_issue: Open an issue in a GitHub repository",
]
TASK = "Book a flight from Boston to Paris, then order a large pepperoni pizza for dinner."
FLIGHT, PIZZA = "Book a flight from Boston to Paris", "order a large pepperoni pizza"


@pytest.fixture(scope="module", params=sorted(MODELS), ids=sorted(MODELS))
def row(request: pytest.FixtureRequest) -> tuple[OnnxModel, OnnxEncoder]:
    model = MODELS[request.param]
    return model, OnnxEncoder.of(model)


def test_its_files_are_where_the_row_says_with_their_digests(
    row: tuple[OnnxModel, OnnxEncoder],
) -> None:
    model, _ = row
    assert model.unfit(default_model_dir(model)) == []


def test_it_gives_unit_vectors_of_its_dimension(row: tuple[OnnxModel, OnnxEncoder]) -> None:
    model, encoder = row
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), model.dim) == (len(TEXTS), encoder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert encoder.model_id == model.model_id


def test_a_text_reads_the_same_in_any_batch(row: tuple[OnnxModel, OnnxEncoder]) -> None:
    _, encoder = row
    np.testing.assert_array_equal(encoder.encode(TEXTS), encoder.encode(TEXTS))
    np.testing.assert_allclose(encoder.encode(TEXTS)[1], encoder.encode([TEXTS[1]])[0], atol=1e-4)


def test_queries_take_the_rows_prefix(row: tuple[OnnxModel, OnnxEncoder]) -> None:
    model, encoder = row
    query = "post to slack"
    expected = encoder.encode([model.query_prefix + query])
    np.testing.assert_array_equal(encode_query(encoder, [query]), expected)
    assert np.allclose(expected, encoder.encode([query])) == (not model.query_prefix)


def test_one_pass_reads_the_clauses_in_context(row: tuple[OnnxModel, OnnxEncoder]) -> None:
    """The whole pattern's query vector as ``encode_query`` gives it and, from the same pass,
    each clause's, nearer its own clause read alone than the other's; a span no token
    covers gets the whole vector."""
    _, encoder = row
    spans = [(TASK.index(p), TASK.index(p) + len(p)) for p in (FLIGHT, PIZZA)] + [(0, 0)]
    whole, steps = encoder.encode_spans(TASK, spans)
    np.testing.assert_allclose(whole, encode_query(encoder, [TASK])[0], atol=1e-5)
    assert steps.shape == (3, encoder.dim)
    assert np.allclose(np.linalg.norm(steps, axis=1), 1, atol=1e-5)
    cos = steps[:2] @ encode_query(encoder, [FLIGHT, PIZZA]).T
    assert cos[0, 0] > cos[0, 1]
    assert cos[1, 1] > cos[1, 0]
    np.testing.assert_allclose(steps[2], whole, atol=1e-6)


def test_its_weights_digest_is_its_model_files_sha256(row: tuple[OnnxModel, OnnxEncoder]) -> None:
    model, encoder = row
    onnx = model.path(default_model_dir(model), "model.onnx")
    assert encoder.weights_digest == hashlib.sha256(onnx.read_bytes()).hexdigest()[:16]
    assert encoder.weights_digest == model.files["model.onnx"][1][:16]


def test_a_retrieval_query_finds_its_tool(row: tuple[OnnxModel, OnnxEncoder]) -> None:
    _, encoder = row
    query = encode_query(encoder, ["will it rain in Paris tomorrow"])[0]
    assert int(np.argmax(encoder.encode(TOOLS) @ query)) == 2
