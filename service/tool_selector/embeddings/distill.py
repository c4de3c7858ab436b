"""Build the static embedding table of the bundled model (offline, at install time).

Building needs torch and the model package (the ``offline`` extra); serving only reads the
table (``embeddings/static.py``), so the Dockerfile builds it in its build stage and ships
the table, not torch.

Model2Vec's recipe (Tulkens & van Dongen, 2024, "Model2Vec: distill a small fast model from
any sentence transformer"), written out here because ``model2vec[distill]`` pins
``transformers<5.4``: every token of the vocabulary is passed through all-MiniLM-L6-v2 on its
own (``[CLS] token [SEP]``), and the output is mean-pooled the way sentence-transformers pools
a sentence. A text's static embedding is then the weighted mean of its tokens' rows, which
costs a tokenizer call and a gather: thousands of tool texts per second on one core.

The rows are centred (the vocabulary's mean row, a direction every text shares, is
subtracted) and each carries a weight ``sif / (sif + p(token))`` (Arora et al., 2017, smooth
inverse frequency) with ``p`` from the Zipf law over the vocabulary's rank (Model2Vec's
default), so frequent pieces such as ``the`` or ``##s`` count less in a mean. Chosen against
the variants Model2Vec offers (uncentred, PCA to 256, the token's own output instead of the
mean, SIF 1e-3 to 1e-6) by R@5 on metatool, BFCL and Seal-Tools (docs/performance.md).

Deterministic: the same package versions give the same table (torch on one CPU thread).
Written as ``vectors.npy`` (float16), ``weights.npy``, ``tokenizer.json`` and
``manifest.json`` (id and provenance) into one directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from tool_selector.embeddings.encoder import OFFLINE_EXTRA, bundled_model_path
from tool_selector.errors import MissingDependencyError

#: Bump when the recipe changes: part of the static model id, so cached vectors never mix.
RECIPE_VERSION = 2
SIF_COEFFICIENT = 1e-5
_BATCH = 1024


def distill(output: Path, model_path: Path | None = None) -> dict[str, Any]:
    """Write the static table of the model at ``model_path`` (the bundled one by default)."""
    try:
        import torch  # noqa: PLC0415
        from transformers import AutoModel  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError("torch", OFFLINE_EXTRA) from exc
    source = model_path or bundled_model_path()
    started = time.perf_counter()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    vocab = json.loads((source / "tokenizer.json").read_text())["model"]["vocab"]
    size = max(vocab.values()) + 1
    config = json.loads((source / "config.json").read_text())
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    rows = np.zeros((size, int(config["hidden_size"])), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, size, _BATCH):
            ids = torch.arange(start, min(start + _BATCH, size), dtype=torch.long)
            batch = torch.stack(
                [torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1
            )
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch))[0]
            rows[start : start + len(ids)] = hidden.mean(dim=1).numpy()
    return _write(output, source, rows, time.perf_counter() - started)


def is_current(folder: Path) -> bool:
    """Whether ``folder`` holds a table built by this recipe (``make install`` skips it)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(manifest.get("recipe") == RECIPE_VERSION and (folder / "vectors.npy").is_file())


def sif_weights(size: int, coefficient: float = SIF_COEFFICIENT) -> np.ndarray[Any, Any]:
    """``a / (a + p(rank))`` with ``p`` Zipfian over the vocabulary order (rank = id + 1)."""
    ranks = np.arange(1, size + 1, dtype=np.float64)
    p = (1.0 / ranks) / np.sum(1.0 / ranks)
    return np.asarray(coefficient / (coefficient + p), dtype=np.float32)


def _write(
    output: Path, source: Path, rows: np.ndarray[Any, Any], seconds: float
) -> dict[str, Any]:
    output.mkdir(parents=True, exist_ok=True)
    table = (rows - rows.mean(axis=0)).astype(np.float16)
    np.save(output / "vectors.npy", table)
    np.save(output / "weights.npy", sif_weights(len(rows)))
    shutil.copyfile(source / "tokenizer.json", output / "tokenizer.json")
    digest = hashlib.sha256(table.tobytes()).hexdigest()[:16]
    manifest = {
        "id": f"all-MiniLM-L6-v2-static-v{RECIPE_VERSION}-{digest}",
        "recipe": RECIPE_VERSION,
        "source": str(source.name),
        "vocabulary": len(rows),
        "dim": int(rows.shape[1]),
        "build_seconds": round(seconds, 1),
    }
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
