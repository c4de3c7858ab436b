"""MiniLM's static table fitted to its model's sentence vectors (``embeddings/refit.py``) and
the sentences it is fitted on (``embeddings/sentences.py``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from tool_selector.embeddings import distill, refit, sentences
from tool_selector.embeddings.models import MINILM
from tool_selector.embeddings.pieces import MAX_TOKENS
from tool_selector.embeddings.static import StaticEncoder, default_static_path

DIM = 8
VOCAB = 40


class Pieces:
    """A word-piece model over letters: each letter of a word is one piece (its alphabet
    index), as ``tokenizers``' ``model.tokenize`` returns them (objects with ``id``)."""

    class Token:
        def __init__(self, i: int) -> None:
            self.id = i

    def __init__(self) -> None:
        self.calls = 0

    def tokenize(self, word: str) -> list[Token]:
        self.calls += 1
        return [self.Token(ord(c) - ord("a")) for c in word if c.isalpha()]


def test_piece_counts_split_as_the_static_encoder_reads_a_text() -> None:
    pieces = Pieces()
    counts = refit.piece_counts(["Ab ba, a_b!", "", "c" * 600], pieces, VOCAB).toarray()
    assert counts[0, :3].tolist() == [3, 3, 0]  # lower case, "_" splits words
    assert counts[1].sum() == 0
    assert counts[2, 2] == MAX_TOKENS  # the first MAX_TOKENS pieces only
    assert pieces.calls == 5  # each distinct word once: ab, ba, a, b and the c's
    assert counts.shape == (3, VOCAB)


def _problem(seed: int = 0) -> tuple[np.ndarray, np.ndarray, object, np.ndarray]:
    """A table, its weights, texts over the first 20 pieces, and targets made by a hidden
    table: a fitted table should recover their directions."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(VOCAB, DIM)).astype(np.float32)
    hidden = rng.normal(size=(VOCAB, DIM))
    weights = rng.uniform(0.5, 1.0, VOCAB).astype(np.float32)
    words = ["".join(chr(97 + int(i)) for i in rng.integers(0, 20, 6)) for _ in range(400)]
    counts = refit.piece_counts(words, Pieces(), VOCAB)
    targets = np.asarray(counts @ (hidden * weights[:, None]), dtype=np.float32)
    return rows, weights, counts, targets


def test_the_fit_moves_the_used_rows_toward_the_model_and_leaves_the_others() -> None:
    rows, weights, counts, targets = _problem()
    fitted = refit.refit(rows, weights, counts, targets)
    before = refit.median_cosine(rows, weights, counts, targets)
    after = refit.median_cosine(fitted, weights, counts, targets)
    assert before + 0.2 < after
    free = refit.refit(rows, weights, counts, targets, alpha=1e-4)
    assert refit.median_cosine(free, weights, counts, targets) > 0.99  # the hidden table
    assert np.array_equal(fitted[20:], rows[20:])  # no text uses them
    assert fitted.dtype == np.float32
    assert not np.array_equal(fitted[:20], rows[:20])


def test_a_heavy_penalty_keeps_the_distilled_rows_and_no_text_changes_nothing() -> None:
    rows, weights, counts, targets = _problem(1)
    kept = refit.refit(rows, weights, counts, targets, alpha=1e6)
    assert np.allclose(kept, rows, atol=1e-3)
    empty = refit.piece_counts([""], Pieces(), VOCAB)
    assert np.array_equal(refit.refit(rows, weights, empty, targets[:1]), rows)


def test_the_fit_solves_the_normal_equations() -> None:
    """Against a direct dense solve of the objective the module states."""
    rows, weights, counts, targets = _problem(2)
    fitted = refit.refit(rows, weights, counts, targets, alpha=0.5)
    used = np.unique(counts.indices)
    dense = counts[:, used].toarray() * weights[used]
    means = dense / dense.sum(axis=1, keepdims=True)
    start = rows[used].astype(np.float64)
    scale = np.median(np.linalg.norm(means @ start, axis=1))
    unit = targets / np.linalg.norm(targets, axis=1, keepdims=True)
    gram = means.T @ means
    penalty = 0.5 * gram.diagonal().mean()
    lhs = gram + penalty * np.eye(len(used))
    solved = np.linalg.solve(lhs, means.T @ (scale * unit) + penalty * start)
    assert np.allclose(fitted[used], solved, atol=1e-4)


def test_piece_counts_read_texts_as_the_static_encoder_does(tmp_path: Path) -> None:
    """The fit's weighted sums, normalised, are the static encoder's vectors: the same words,
    pieces, truncation and weights, on the real tokenizer."""
    shutil.copyfile(default_static_path() / "tokenizer.json", tmp_path / "tokenizer.json")
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    size = tokenizer.get_vocab_size()
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(size, 4)).astype(np.float16)
    weights = rng.uniform(0.1, 1.0, size).astype(np.float32)
    np.save(tmp_path / "vectors.npy", rows)
    np.save(tmp_path / "weights.npy", weights)
    manifest = {"id": "t-static-v0-x", "recipe": distill.RECIPE_VERSION}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    texts = [
        "Send_a message to #general, then READ it back!",
        "Überprüfe die Wetterdaten für München 2026",
        " ".join(f"word{i} antidisestablishmentarianism" for i in range(300)),
    ]
    counts = refit.piece_counts(texts, tokenizer.model, size)
    sums = counts @ (rows.astype(np.float32) * weights[:, None])
    expected = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    assert counts[2].sum() == MAX_TOKENS
    assert np.allclose(StaticEncoder(tmp_path).encode(texts), expected, atol=1e-5)


def test_the_sentences_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Read in a fresh interpreter under two hash seeds: the same sentences, in order."""
    package = tmp_path / "seeded_pkg"
    package.mkdir()
    for i in range(6):
        (package / f"m{i}.py").write_text(
            "\n".join(
                f'def f{j}():\n    """Return item {j} of the list {i} in order."""'
                for j in range(5)
            )
        )
    code = (
        "import json, sys; from tool_selector.embeddings import sentences as s; "
        "s.sysconfig.get_paths = lambda: {'stdlib': sys.argv[1]}; "
        "print(json.dumps(s.docstring_sentences(['seeded_pkg'])))"
    )
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
        out = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "none")],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout))
    assert runs[0] == runs[1]
    assert len(runs[0]) == 30


def test_an_invalid_escape_does_not_drop_a_file_where_warnings_are_errors(
    tmp_path: Path,
) -> None:
    module = tmp_path / "escapes.py"
    module.write_text('def f():\n    """Match digits like \\d in the given text string."""\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(sentences._paragraphs(module)) == [
            "Match digits like \\d in the given text string."
        ]


def test_paragraphs_keep_first_paragraphs_of_prose_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "prose_pkg"
    (package / "tests").mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""Read the settings file and return them as a dictionary.\n\nMore text here."""\n'
        "def f():\n"
        '    """Too short."""\n'
        "def g():\n"
        '    """x = [1, 2, 3] + {4: 5} >= (6, 7) ** 8 // 9 - 10"""\n'
        "class C:\n"
        '    """Send a message to a channel of the chat service."""\n'
        "def h():\n"
        '    """Send a message to a channel of the chat service."""\n'
    )
    (package / "tests" / "test_x.py").write_text('"""A test module that is never read here."""\n')
    (package / "broken.py").write_text("def (:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    got = list(sentences._paragraphs(package / "__init__.py"))
    assert got == [
        "Read the settings file and return them as a dictionary.",
        "Send a message to a channel of the chat service.",
        "Send a message to a channel of the chat service.",
    ]
    assert list(sentences._paragraphs(package / "broken.py")) == []
    nowhere = {"stdlib": str(tmp_path / "none")}
    monkeypatch.setattr(sentences.sysconfig, "get_paths", lambda: nowhere)
    read = sentences.docstring_sentences(["prose_pkg", "no_such_package_here"])
    assert read == got[:2]  # once each; the tests folder and a missing package skipped


def test_minilm_s_table_is_current_only_when_fitted_as_this_version_fits(
    tmp_path: Path,
) -> None:
    np.save(tmp_path / "vectors.npy", np.zeros((2, 2), np.float16))
    manifest = {"id": f"{MINILM.name}-static-v{distill.RECIPE_VERSION}-0"}
    manifest["recipe"] = distill.RECIPE_VERSION
    now = {
        "version": refit.FIT_VERSION,
        "alpha": refit.ALPHA,
        "packages": list(sentences.PACKAGES),
        "weights": MINILM.weights_digest,
    }
    for fit, current in (
        (None, False),
        ({**now, "weights": "0" * 16}, False),
        ({**now, "version": refit.FIT_VERSION - 1}, False),
        ({**now, "alpha": refit.ALPHA / 2}, False),
        ({**now, "packages": list(sentences.PACKAGES)[:-1]}, False),
        (now, True),
    ):
        written = manifest if fit is None else {**manifest, "fit": fit}
        (tmp_path / "manifest.json").write_text(json.dumps(written))
        assert distill.is_current(tmp_path) is current
