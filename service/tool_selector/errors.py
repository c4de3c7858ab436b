"""The service's one error hierarchy. Foreign errors are re-raised as these with ``from exc``.

::

    ToolSelectorError
    ├── ConfigError              a setting is missing or invalid (fails at startup, names the key)
    ├── MissingDependencyError   an optional dependency is absent (message carries the install hint)
    ├── EmbeddingStopped         background embedding stopped between chunks: shutting down
    ├── DatasetError             an eval data set is missing or malformed (names file and line)
    └── RequestError             a request is refused; carries HTTP status and a machine code
        ├── BadRequest               400: malformed JSON, wrong types, limits exceeded
        ├── Unauthorized             401: missing or wrong credentials
        ├── NotFound                 404: a catalog key the service does not hold
        ├── RequestTimeout           408: the body did not arrive in time
        ├── PayloadTooLarge          413: body over the size cap
        ├── UnsupportedMediaType     415: not application/json
        └── ServiceUnavailable       503: overloaded or shutting down
            └── LearningUnavailable  503: the learning store cannot keep feedback

Every ``RequestError`` becomes ``{"code": ..., "detail": ...}`` with its status at the HTTP edge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import msgspec


class ToolSelectorError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(ToolSelectorError):
    """A setting is invalid; the message names the environment key."""


class MissingDependencyError(ToolSelectorError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, hint: str) -> None:
        super().__init__(f"{package} is not installed; install it with: {hint}")
        self.package = package


class EmbeddingStopped(ToolSelectorError):
    """Embedding work stopped between two chunks because the service is shutting down."""


class DatasetError(ToolSelectorError):
    """An eval data set (bench folder, tools or queries file) is missing or malformed."""


class RequestError(ToolSelectorError):
    """A request the service refuses, with its HTTP status and machine-readable code."""

    status: ClassVar[int] = 400

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class BadRequest(RequestError):
    status = 400


class Unauthorized(RequestError):
    status = 401


class NotFound(RequestError):
    status = 404


class RequestTimeout(RequestError):
    status = 408


class PayloadTooLarge(RequestError):
    status = 413


class UnsupportedMediaType(RequestError):
    status = 415


class ServiceUnavailable(RequestError):
    status = 503


class LearningUnavailable(ServiceUnavailable):
    """The learning store cannot keep feedback now (its Redis down, its folder unwritable):
    the feedback is not acknowledged."""


#: Foreign exceptions a decoder raises, each with the code and detail a caller reads: the one
#: table, read in order (``ValidationError`` is a ``DecodeError``, so it comes first; bytes
#: that are not UTF-8 come before any other ``DecodeError``: ``_bad_utf8``).
_DECODE_ERRORS: tuple[tuple[type[Exception], str, Callable[[Exception], str]], ...] = (
    (msgspec.ValidationError, "invalid_request", str),
    (UnicodeDecodeError, "invalid_utf8", lambda e: f"body is not valid UTF-8: {_reason(e)}"),
    (msgspec.DecodeError, "malformed_json", lambda e: f"body is not valid JSON: {e}"),
    (RecursionError, "too_deep", lambda _: "JSON nesting is too deep"),
)
#: What a JSON decode may raise besides our own errors.
DECODE_ERRORS: tuple[type[Exception], ...] = tuple(kind for kind, _, _ in _DECODE_ERRORS)
#: HTTP statuses the web framework raises on its own, as our codes.
_HTTP_CODES = {
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    503: "unavailable",
}


def bad_request(exc: Exception, at: str = "") -> BadRequest:
    """A decode error (one of ``DECODE_ERRORS``) as our ``BadRequest``; ``at`` names where the
    decoded bytes sit in the body (``$.tools``) when they are only part of it."""
    for kind, code, detail in _DECODE_ERRORS:
        if _bad_utf8(exc) if kind is UnicodeDecodeError else isinstance(exc, kind):
            return BadRequest(
                code, _located(detail(exc), at) if code == "invalid_request" else detail(exc)
            )
    raise TypeError(f"not a decode error: {type(exc).__name__}") from exc


def code_for_status(status: int) -> str:
    """Our code for an HTTP status the framework raised itself."""
    return _HTTP_CODES.get(status, "http_error")


def _located(message: str, at: str) -> str:
    """msgspec's ``... - at `$[0].name``` with the path rebased under ``at``."""
    if not at:
        return message
    if " - at `$" in message:
        return message.replace(" - at `$", f" - at `{at}", 1)
    return f"{message} - at `{at}`"


def _bad_utf8(exc: Exception) -> bool:
    """Whether ``exc`` says the bytes are not UTF-8: msgspec up to 0.22 raised
    ``UnicodeDecodeError``, 0.23 a ``DecodeError`` ("Invalid UTF-8 encoded string")."""
    if isinstance(exc, UnicodeDecodeError):
        return True
    return type(exc) is msgspec.DecodeError and "utf-8" in str(exc).lower()


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
