"""The error edge: every error the service sends is classified and rendered here.

``error_bytes`` renders the one error body of a path: ``{"code","detail"}``, plus the proxy's
``success``/``error``/``message`` on the compress path. ``error_response`` is registered for
every exception: our ``RequestError`` keeps its status and code, the framework's HTTP errors
take theirs from the table in ``tool_selector.errors``, anything else is a logged 500. The
guard renders its refusals with ``error_bytes`` too, and writes the log line of every
refused or failed search and feedback request (``http.guard``), with the code answered here.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.types import Scope

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
#: Where ``error_response`` leaves the code it answered, in the request's ASGI scope state
#: (as ``search_id``), for the guard's log line of the refused request.
_CODE = "tool_selector.error_code"


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
    state.metrics.errors.labels(code, route_of(request.scope["path"])).inc()
    request.scope.setdefault("state", {})[_CODE] = code
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        error_bytes(request.scope["path"], code, detail),
        status_code=status,
        media_type=JSON,
        headers=headers,
    )


def answered_code(scope: Scope) -> str | None:
    """The error code ``error_response`` answered the request of ``scope`` with, if any."""
    found: str | None = scope.get("state", {}).get(_CODE)
    return found


def contract_of(path: str) -> str | None:
    """The wire contract a guarded path answers errors in: ``compress`` on the compress path
    (whatever the body: ``error_bytes``), ``search`` on the search path, ``None`` elsewhere."""
    if path not in SEARCH_PATHS:
        return None
    return "compress" if is_compress_path(path) else "search"


def route_of(path: str) -> str:
    """The ``route`` label ``tool_selector_errors_total`` counts an error on ``path`` under
    (``metrics.ROUTES``): a search path's contract, ``feedback``, ``lint``, or ``other``."""
    if path == FEEDBACK_PATH:
        return "feedback"
    if path == LINT_PATH:
        return "lint"
    return contract_of(path) or "other"


def require_json(request: Request[Any, Any, Any]) -> None:
    """415 unless the request says its body is JSON."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != JSON:
        raise UnsupportedMediaType(
            "unsupported_media_type", f"Content-Type must be {JSON}, got {media or 'nothing'}"
        )
