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
        ├── RequestTimeout           408: the body did not arrive in time
        ├── PayloadTooLarge          413: body over the size cap
        ├── UnsupportedMediaType     415: not application/json
        └── ServiceUnavailable       503: overloaded or shutting down

Every ``RequestError`` becomes ``{"code": ..., "detail": ...}`` with its status at the HTTP edge.
"""

from __future__ import annotations

from typing import ClassVar


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


class RequestTimeout(RequestError):
    status = 408


class PayloadTooLarge(RequestError):
    status = 413


class UnsupportedMediaType(RequestError):
    status = 415


class ServiceUnavailable(RequestError):
    status = 503
