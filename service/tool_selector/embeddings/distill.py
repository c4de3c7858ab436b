"""Build the static embedding tables of the encoders (offline, at install time).

Two tables, one per encoder of the dense arm's ensemble, each in its model's own space:
MiniLM's (``distill``) from the bundled full-precision all-MiniLM-L6-v2 on torch (the
``offline`` extra), and bge-small-en-v1.5's (``distill_onnx``) from its int8 ONNX row on
ONNX Runtime alone, so a runtime install can build it. Serving only reads the tables
(``embeddings/static.py``), so the Dockerfile builds them in its build stage and ships the
tables, not torch.

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

bge-small-en-v1.5's table takes the same recipe from its ONNX row, the mean of the three
positions' last hidden states although the model pools a sentence by its [CLS] vector (the
[CLS] vector, normalised or not, and the token's own output ranked no better on the cold
path's dev split), with SIF 1e-4, Model2Vec's default (``ONNX_SIF_COEFFICIENT``; 1e-5 ranked
the agent set's paraphrases lower there): docs/performance.md, "The static arm".

MiniLM's table is then fitted to what the served int8 model says of whole sentences, the
first paragraphs of the docstrings of the standard library and of the packages every install
has (``embeddings/refit.py``, ``embeddings/sentences.py``): the rows of the pieces they use
move so each sentence's static vector points where the model's does, and are not centred
again. The cold path ranks with that table against that model's query vectors
(docs/quality.md, "The static table fitted to its model's sentences").

Deterministic: the same package versions give the same table on the same machine (torch, or
ONNX Runtime, on one thread). MiniLM's fitted table also depends on the Python it is built
with (the standard library's docstrings change between patch releases) and on the CPU (its
sentence vectors come from int8 kernels that may round otherwise on another instruction
set); its manifest names the Python, the sentences' count and their digest. Written as
``vectors.npy`` (float16), ``weights.npy``, ``tokenizer.json`` and ``manifest.json`` (id
and provenance) into one directory.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tool_selector.embeddings.encoder import OFFLINE_EXTRA, bundled_model_path
from tool_selector.embeddings.models import MINILM, OnnxModel, default_model_dir
from tool_selector.embeddings.refit import ALPHA, FIT_VERSION, median_cosine, piece_counts, refit
from tool_selector.embeddings.sentences import PACKAGES, docstring_sentences
from tool_selector.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from tool_selector.embeddings.onnx import OnnxEncoder

#: Bump when the recipe changes: part of the static model id, so cached vectors never mix.
RECIPE_VERSION = 2
SIF_COEFFICIENT = 1e-5
#: The SIF coefficient of a table distilled from an ONNX row (``distill_onnx``).
ONNX_SIF_COEFFICIENT = 1e-4
_BATCH = 1024


def distill(
    output: Path, model_path: Path | None = None, fit_folder: Path | None = None
) -> dict[str, Any]:
    """Write the static table of the model at ``model_path`` (the bundled one by default),
    fitted to the sentence vectors of the int8 MiniLM in ``fit_folder`` (default: where
    ``tool-selector fetch-model`` puts it, which serving reads)."""
    from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

    served = OnnxEncoder.of(MINILM, fit_folder)  # first: a missing model fails before the work
    source = model_path or bundled_model_path()
    started = time.perf_counter()
    rows = _torch_rows(source)
    tokenizer = source / "tokenizer.json"
    table, fit = _fitted(rows - rows.mean(axis=0), tokenizer, served)
    return _write(
        output,
        model=MINILM.name,
        source=source.name,
        tokenizer=tokenizer,
        table=table,
        seconds=time.perf_counter() - started,
        fit=fit,
    )


def _torch_rows(source: Path) -> np.ndarray[Any, Any]:
    """Every token of the model at ``source`` as ``[CLS] token [SEP]``, mean-pooled (torch,
    one thread)."""
    try:
        import torch  # noqa: PLC0415
        from transformers import AutoModel  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError("torch", OFFLINE_EXTRA) from exc
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
    return rows


def _fitted(
    table: np.ndarray[Any, Any], tokenizer: Path, served: OnnxEncoder
) -> tuple[np.ndarray[Any, Any], dict[str, Any]]:
    """The centred ``table`` fitted to ``served``'s vectors of the docstring sentences
    (``refit``), and what the manifest says of the fit."""
    from tokenizers import Tokenizer  # noqa: PLC0415

    texts = docstring_sentences()
    if not texts:
        raise ConfigError("no docstring sentences to fit MiniLM's static table to")
    counts = piece_counts(texts, Tokenizer.from_file(str(tokenizer)).model, len(table))
    targets = served.encode(texts)
    weights = sif_weights(len(table))
    fitted = refit(table, weights, counts, targets)
    cosines = [median_cosine(t, weights, counts, targets) for t in (table, fitted)]
    return fitted, {
        **_fit_recipe(),
        "sentences": len(texts),
        "corpus": hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16],
        "python": platform.python_version(),
        "toward": served.model_id,
        "weights": served.weights_digest,
        "median_cosine": [round(c, 3) for c in cosines],
    }


def _fit_recipe() -> dict[str, Any]:
    """What a table's fit must match to be current: the fit's version, its penalty and the
    packages its sentences are read from."""
    return {"version": FIT_VERSION, "alpha": ALPHA, "packages": list(PACKAGES)}


def distill_onnx(
    output: Path, model: OnnxModel, folder: Path | None = None, *, vocabulary: int | None = None
) -> dict[str, Any]:
    """Write the static table of ONNX row ``model`` from its files in ``folder`` (default:
    where ``tool-selector fetch-model`` puts them): every token as ``[CLS] token [SEP]``,
    the three positions' last hidden states averaged (Model2Vec's pooling, whatever the
    row's own), on one ONNX Runtime thread. Needs no torch. ``vocabulary``: the first that
    many tokens only (a small table, for a test)."""
    from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

    source = default_model_dir(model) if folder is None else folder
    started = time.perf_counter()
    encoder = OnnxEncoder.of(model, source)
    tokenizer = model.path(source, "tokenizer.json")
    vocab = json.loads(tokenizer.read_text())["model"]["vocab"]
    size = max(vocab.values()) + 1 if vocabulary is None else vocabulary
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    rows = np.zeros((size, encoder.dim), dtype=np.float32)
    for start in range(0, size, _BATCH):
        ids = range(start, min(start + _BATCH, size))
        rows[start : start + len(ids)] = encoder.states([[cls_id, i, sep_id] for i in ids]).mean(1)
    return _write(
        output,
        model=model.name,
        source=model.model_id,
        tokenizer=tokenizer,
        table=rows - rows.mean(axis=0),
        seconds=time.perf_counter() - started,
        sif=ONNX_SIF_COEFFICIENT,
        weights=model.weights_digest,
    )


def is_current(folder: Path, model: str = MINILM.name, weights: str | None = None) -> bool:
    """Whether ``folder`` holds ``model``'s table built by this recipe (``make install``
    skips it), from the weights of digest ``weights`` when given (an ONNX row's); MiniLM's
    fitted toward the int8 weights serving reads."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(
        manifest.get("recipe") == RECIPE_VERSION
        and str(manifest.get("id", "")).startswith(f"{model}-static-")
        and (weights is None or manifest.get("weights") == weights)
        and (model != MINILM.name or _fitted_as_now(manifest.get("fit")))
        and (folder / "vectors.npy").is_file()
    )


def _fitted_as_now(fit: Any) -> bool:
    """Whether a MiniLM table's ``fit`` is this version's, toward the weights serving reads."""
    if not isinstance(fit, dict) or fit.get("weights") != MINILM.weights_digest:
        return False
    return all(fit.get(key) == value for key, value in _fit_recipe().items())


def sif_weights(size: int, coefficient: float = SIF_COEFFICIENT) -> np.ndarray[Any, Any]:
    """``a / (a + p(rank))`` with ``p`` Zipfian over the vocabulary order (rank = id + 1)."""
    ranks = np.arange(1, size + 1, dtype=np.float64)
    p = (1.0 / ranks) / np.sum(1.0 / ranks)
    return np.asarray(coefficient / (coefficient + p), dtype=np.float32)


def _write(
    output: Path,
    *,
    model: str,
    source: str,
    tokenizer: Path,
    table: np.ndarray[Any, Any],
    seconds: float,
    sif: float = SIF_COEFFICIENT,
    weights: str | None = None,
    fit: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The table of ``model`` (its name starts the id; its rows centred, then fitted when
    ``fit`` is given) into ``output``;
    ``source``: what its rows were read from; ``sif``: its weights' coefficient;
    ``weights``: the digest of the ONNX weights it was distilled from (``is_current``), when
    it was; ``fit``: what it was fitted to, when it was. The id's digest is the stored rows'
    (the weights follow from the recipe: ``RECIPE_VERSION``)."""
    output.mkdir(parents=True, exist_ok=True)
    rows = table.astype(np.float16)
    np.save(output / "vectors.npy", rows)
    np.save(output / "weights.npy", sif_weights(len(rows), sif))
    shutil.copyfile(tokenizer, output / "tokenizer.json")
    digest = hashlib.sha256(rows.tobytes()).hexdigest()[:16]
    manifest = {
        "id": f"{model}-static-v{RECIPE_VERSION}-{digest}",
        "recipe": RECIPE_VERSION,
        "source": source,
        "vocabulary": len(rows),
        "dim": int(rows.shape[1]),
        "sif": sif,
        "build_seconds": round(seconds, 1),
        **({} if weights is None else {"weights": weights}),
        **({} if fit is None else {"fit": fit}),
    }
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
