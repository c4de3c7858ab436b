"""The error edge: every error the service sends is classified and rendered here.

``error_bytes`` renders the one error body of a path: ``{"code","detail"}``, plus the proxy's
``success``/``error``/``message`` on the compress path. ``error_response`` is registered for
every exception: our ``RequestError`` keeps its status and code, the framework's HTTP errors
take theirs from the table in ``tool_selector.errors``, anything else is a logged 500. The
guard renders its refusals with ``error_bytes`` too.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException

from tool_selector.errors import RequestError, UnsupportedMediaType, code_for_status
from tool_selector.http.state import state_of
from tool_selector.pipeline.contracts import is_compress_path
from tool_selector_client.catalog_lint import LINT_PATH
from tool_selector_client.wire import (
    COMPRESS_PATH,
    FEEDBACK_PATH,
    SEARCH_PATH,
    CompressErrorBody,
    ErrorBody,
)

#: Every path a search is served on (the compress path with and without its slash).
SEARCH_PATHS = frozenset({SEARCH_PATH, COMPRESS_PATH, COMPRESS_PATH.rstrip("/")})
#: Every path the guard reads the body of: the searches, the catalog report, the feedback.
GUARDED_PATHS = SEARCH_PATHS | {LINT_PATH, FEEDBACK_PATH}
JSON = "application/json"
_ENCODER = msgspec.json.Encoder()


def error_bytes(path: str, code: str, detail: str) -> bytes:
    """The one error body of ``path`` (see the module)."""
    if is_compress_path(path):
        body: msgspec.Struct = CompressErrorBody(
            error=code, message=detail, code=code, detail=detail
        )
    else:
        body = ErrorBody(code=code, detail=detail)
    return _ENCODER.encode(body)


def error_response(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """Any exception as the one JSON error shape of the request's path."""
    state = state_of(request)
    if isinstance(exc, RequestError):
        status, code, detail = exc.status, exc.code, exc.detail
    elif isinstance(exc, HTTPException):
        status, code, detail = exc.status_code, code_for_status(exc.status_code), exc.detail
    else:
        status, code, detail = 500, "internal_error", "internal error; see the service log"
        state.logger.error("unhandled error", exc_info=exc)
    state.metrics.errors.labels(code).inc()
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        error_bytes(request.scope["path"], code, detail),
        status_code=status,
        media_type=JSON,
        headers=headers,
    )


def require_json(request: Request[Any, Any, Any]) -> None:
    """415 unless the request says its body is JSON."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != JSON:
        raise UnsupportedMediaType(
            "unsupported_media_type", f"Content-Type must be {JSON}, got {media or 'nothing'}"
        )
