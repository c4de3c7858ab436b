"""Static embeddings of the encoders: a table lookup instead of a transformer pass.

A table (``tool-selector distill-static [--model NAME]``, built by ``make install`` and the
Dockerfile; see ``embeddings/distill.py``) holds one row per token of a model's vocabulary,
in that model's space: all-MiniLM-L6-v2's (fitted to that model's vectors of whole
sentences, ``embeddings/refit.py``), and bge-small-en-v1.5's for the second encoder.
A text's vector is the SIF-weighted mean of its tokens' rows, L2-normalised: one tokenizer
call and a gather, thousands of tool texts per second, so a catalog nobody has embedded gets
a dense signal on its very first request while the models embed it in the background.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from tool_selector.embeddings.distill import RECIPE_VERSION
from tool_selector.embeddings.encoder import Encoder
from tool_selector.embeddings.models import MINILM
from tool_selector.embeddings.pieces import piece_matrix
from tool_selector.errors import ConfigError, MissingDependencyError
from tool_selector.ranking.dense import FloatArray, normalise_rows
from tool_selector.ranking.text import ToolText
from tool_selector.ranking.tokenize import split_identifier

#: Words whose pieces are memoised (cleared when full: a few MB at most).
_MAX_WORDS = 100_000
#: Longest word the memo keeps (as ``tokenize`` bounds its own): a catalog of 16,000-letter
#: words kept 16.6 MB of memo a catalog, up to 3.2 GB, past every cache's bound.
_MAX_WORD_CHARS = 32


def static_text(tool: ToolText) -> str:
    """What the static arm embeds of a tool: its name words (namespace first), description and
    search-only text (when it has one).

    Not the parameters the model's text adds: on `arcade` and the agent set that ranked
    better (R@5 83.9 vs 82.1 and 77.7 vs 76.4, fewer empty answers) at a third of the cost
    (5.1 vs 13.8 ms of CPU for `arcade`'s 257 tools), docs/performance.md.
    """
    words = " ".join(split_identifier(tool.bare_name))
    head = f"{tool.namespace} {words}".strip() if tool.namespace else words
    parts = [head, *(p for p in (tool.description, tool.search_text) if p)]
    return ". ".join(parts)


def static_matrix(static: Encoder, tools: Sequence[ToolText]) -> FloatArray:
    """The static arm's tool vectors (one row per tool, contiguous float32)."""
    return np.ascontiguousarray(static.encode([static_text(t) for t in tools]), np.float32)


def default_static_path(model: str = MINILM.name) -> Path:
    """Where ``make install`` and the Dockerfile put ``model``'s table: inside the
    environment (``static-minilm`` for all-MiniLM-L6-v2, ``static-<name>`` for another)."""
    folder = "static-minilm" if model == MINILM.name else f"static-{model}"
    return Path(sys.prefix) / "share" / "tool-selector" / folder


class StaticEncoder:
    """SIF-weighted mean of per-token rows distilled from one model (no model pass): the
    table in ``path``, default ``model``'s where ``make install`` builds it (``model`` also
    names the command that rebuilds it)."""

    def __init__(self, path: Path | None = None, model: str = MINILM.name) -> None:
        try:
            from tokenizers import Tokenizer  # noqa: PLC0415
        except ImportError as exc:
            raise MissingDependencyError("tokenizers", "pip install tokenizers") from exc
        folder = path or default_static_path(model)
        build = "distill-static" if model == MINILM.name else f"distill-static --model {model}"
        try:
            manifest = json.loads((folder / "manifest.json").read_text())
            vectors = np.load(folder / "vectors.npy").astype(np.float32)
            weights = np.load(folder / "weights.npy").astype(np.float32)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"static embeddings missing or unreadable in {folder} ({exc}); build them with "
                f"`tool-selector {build} -o {folder}` (make install does)"
            ) from exc
        self._table: FloatArray = np.ascontiguousarray(vectors * weights[:, None])
        self._tokenizer: Any = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._memo: dict[str, bytes] = {}
        if manifest.get("recipe") != RECIPE_VERSION:
            raise ConfigError(
                f"static embeddings in {folder} are recipe {manifest.get('recipe')}, this "
                f"version needs {RECIPE_VERSION}: rebuild with `tool-selector {build}`"
            )
        self._model_id = str(manifest["id"])

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def weights_digest(self) -> str:
        """The table's digest, as its id carries it (``distill.py``)."""
        return self._model_id.rsplit("-", 1)[-1]

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """SIF-weighted mean of each text's token rows, L2-normalised (zero for no tokens).

        The rows are summed by a sparse product: one row per text holding a 1 per token, in
        the text's order, a repeated token as often as it comes (duplicates are not merged),
        times the table. scipy adds each entry's row to its text's sum in stored order, in
        float32: the same additions in the same order as summing the gathered rows, so the
        same floats, without gathering a row per token (67 MB for 4,000 tool texts, whose
        first touch cost up to 150 ms) or a Python loop per text.
        """
        tokens = piece_matrix(texts, self._pieces, len(self._table))
        return normalise_rows(np.asarray(tokens @ self._table, dtype=np.float32))

    def _pieces(self, words: set[str]) -> dict[str, bytes]:
        """Word-piece ids of each word (int32 bytes), through a memo: the tokenizer runs on
        new words only.

        BERT's pre-tokeniser splits on spaces and punctuation before word pieces, so a
        word's pieces do not depend on its neighbours, and tool vocabularies repeat across
        catalogs. (Punctuation is dropped: ``pieces.WORD`` keeps letters and digits.) Values are
        bytes, which the garbage collector does not track: a memo of lists made every full
        collection walk 100,000 more objects.
        """
        memo = self._memo
        known = {w: memo.get(w) for w in words}
        missing = [w for w, ids in known.items() if ids is None]
        if missing:
            if len(memo) + len(missing) > _MAX_WORDS:
                memo.clear()
            wordpiece = self._tokenizer.model
            for word in missing:
                ids = [t.id for t in wordpiece.tokenize(word)]
                pieces = known[word] = np.asarray(ids, dtype=np.int32).tobytes()
                if len(word) <= _MAX_WORD_CHARS:
                    memo[word] = pieces
        return cast("dict[str, bytes]", known)
