"""The static arm on the real table distilled from the bundled model (tests/support.py
builds it once if ``make install`` has not)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support import static_table
from tool_selector.embeddings import distill
from tool_selector.embeddings.pieces import MAX_TOKENS, WORD
from tool_selector.embeddings.static import StaticEncoder
from tool_selector.ranking.dense import normalise_rows


@pytest.fixture(scope="module")
def static() -> StaticEncoder:
    return StaticEncoder(static_table())


def test_vectors_are_unit_length_rows(static: StaticEncoder) -> None:
    vectors = static.encode(["send a slack message", "read a file", "create a github issue"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_text_without_words_is_a_zero_row(static: StaticEncoder) -> None:
    assert not static.encode(["", "  --- "]).any()


def test_encoding_is_deterministic_and_batch_independent(static: StaticEncoder) -> None:
    texts = ["Post a message to a Slack channel", "Delete a file from disk"]
    together = static.encode(texts)
    assert np.allclose(together, np.vstack([static.encode([t]) for t in texts]), atol=1e-6)


@pytest.mark.parametrize(
    ("query", "near", "far"),
    [
        ("send an email", "compose and send a mail message", "delete a file from disk"),
        ("weather tomorrow", "forecast for a city", "create a pull request"),
        ("schedule a meeting", "create a calendar event", "list git branches"),
    ],
    ids=["email", "weather", "calendar"],
)
def test_similar_meanings_are_closer(
    static: StaticEncoder, query: str, near: str, far: str
) -> None:
    q, a, b = static.encode([query, near, far])
    assert float(q @ a) > float(q @ b)


def test_a_folder_without_a_manifest_is_not_current(tmp_path: Path) -> None:
    assert not distill.is_current(tmp_path)


def test_a_missing_table_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="distill-static"):
        StaticEncoder(tmp_path)


def _gathered(static: StaticEncoder, texts: list[str]) -> np.ndarray:
    """The sum the sparse product replaced: each text's token rows gathered, then added in
    the text's order (float32), L2-normalised."""
    out = np.zeros((len(texts), static.dim), dtype=np.float32)
    for j, text in enumerate(texts):
        words = WORD.findall(text.lower())
        pieces = static._pieces(set(words))
        ids = np.frombuffer(b"".join(pieces[w] for w in words)[: 4 * MAX_TOKENS], np.int32)
        if len(ids):
            out[j] = static._table[ids].sum(axis=0)
    return normalise_rows(out)


def test_the_sparse_sum_gives_the_gathered_rows_floats(static: StaticEncoder) -> None:
    """Bit for bit (the cold path's answers and the pinned ones read these vectors): texts
    with repeated words, none, one, many pieces, and past ``MAX_TOKENS``."""
    rng = np.random.default_rng(3)
    vocab = "send send the email email email to a channel delete file kubernetes pod".split()
    texts = [
        "send the email to the email list, email twice",
        "",
        "...",
        "x",
        "antidisestablishmentarianism unbelievably",
        " ".join(rng.choice(vocab, 900)),  # past MAX_TOKENS: cut as before
        *(" ".join(rng.choice(vocab, int(n))) for n in rng.integers(1, 40, 30)),
    ]
    assert static.encode(texts).tobytes() == _gathered(static, texts).tobytes()  # -0.0 too


def test_a_piece_past_the_table_s_rows_is_an_error(tmp_path: Path) -> None:
    """The sparse product reads each word piece's row by its id, unchecked: a table with
    fewer rows than its tokenizer has ids (a partial build) says so, as the gather did."""
    folder = static_table()
    for name in ("manifest.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    for name in ("vectors.npy", "weights.npy"):
        np.save(tmp_path / name, np.load(folder / name)[:1000])
    short = StaticEncoder(tmp_path)
    assert short.encode(["!!!", ""]).shape == (2, short.dim)  # no piece read: fine
    with pytest.raises(IndexError, match="1000 rows"):
        short.encode(["zebra"])


def test_a_long_word_is_read_but_not_kept(static: StaticEncoder) -> None:
    """The word-piece memo kept words of any length: a catalog of 16,000-letter words kept
    16.6 MB a catalog, up to 3.2 GB, past every cache's bound. Words of more than 32
    characters are read each time now (tokenize bounds its own memo so)."""
    long, short = "x" * 5_000, "weather"
    encoded = static.encode([f"{long} {short}"])
    assert np.allclose(encoded, static.encode([f"{long} {short}"]))
    assert short in static._memo
    assert long not in static._memo
