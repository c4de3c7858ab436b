"""The encoder a Settings object asks for: one place, used by the app and by ``eval``."""

from __future__ import annotations

from pathlib import Path

from tool_selector.embeddings.encoder import BUNDLED_MODEL_ID, Encoder, SentenceTransformerEncoder
from tool_selector.settings import Settings


def encoder_from_settings(settings: Settings) -> Encoder | None:
    """Build the configured encoder (slow: loads a model); ``None`` for lexical-only ranking."""
    if settings.encoder == "none":
        return None
    if settings.encoder == "onnx-int8":
        from tool_selector.embeddings.onnx import OnnxEncoder  # noqa: PLC0415

        return OnnxEncoder(batch_threads=settings.encoder_batch_threads)
    path = Path(settings.model_path) if settings.model_path else None
    return SentenceTransformerEncoder(
        model_path=path, model_id=settings.model_path or BUNDLED_MODEL_ID
    )


def static_from_settings(settings: Settings) -> Encoder | None:
    """The static arm the settings ask for (fast: loads a table); ``None`` when off.

    Raises ``ConfigError`` when the table is missing or unreadable.
    """
    if not settings.static_embeddings or settings.encoder == "none":
        return None
    from tool_selector.embeddings.static import StaticEncoder  # noqa: PLC0415

    return StaticEncoder(Path(settings.static_model_path) if settings.static_model_path else None)


def multilingual_from_settings(settings: Settings) -> Encoder | None:
    """The multilingual arm the settings ask for (a few seconds: loads its tables); ``None``
    when off."""
    if not settings.multilingual or settings.encoder == "none":
        return None
    from tool_selector.embeddings.multilingual import MultilingualEncoder  # noqa: PLC0415

    return MultilingualEncoder(threads=max(1, settings.blas_threads))
