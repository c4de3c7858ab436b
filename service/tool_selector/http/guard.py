"""ASGI middleware in front of the search endpoints and the catalog report: auth, body
read, overload, deadline (the report's own: ``lint_deadline_seconds``).

In order, before any handler code runs:

1. **Auth** (when keys are configured): the credentials are checked from the headers, before
   a byte of the body is read; 401 ``unauthorized`` with ``WWW-Authenticate: Bearer``.
2. **Body read**, *before* an in-flight slot is taken, so a client that sends its body slowly
   holds no ranking slot: a total time budget (``body_timeout_seconds``, 408
   ``request_timeout``; granian itself never times out a stalled body), the size cap (413,
   from ``Content-Length`` or while reading), and a process-wide budget of buffered body bytes
   (``body_buffer_bytes``: bytes are counted as they arrive, so a slow sender holds only what
   it has sent; past it, 503 ``overloaded``). A body that ends before it is complete, or whose
   chunked framing is broken, is a 400 ``malformed_body``: granian reports both as
   ``http.disconnect`` (measured on granian 2.8: a bad chunk size line such as ``zz``, ``-5``
   or an overflowing size, a chunk without its CRLF, a good chunk then a bad one, and a client
   that half-closes mid-body), and the connection may still be open to hear it.
3. **In-flight cap**: at most ``max_in_flight`` search requests ranked at once per process.
   One more waits, first come first served, up to ``admission_wait_ms`` for a slot to be
   handed over, then gets a 503 ``overloaded`` with ``Retry-After`` so the proxy fails open
   instead of queueing behind work it will time out on anyway. Catalog reports have slots
   of their own (``LINT_IN_FLIGHT``) and their own worker thread (``AppState.lint_workers``):
   a report never takes a search's slot or thread, even past its deadline.
4. **Deadline**: once a slot is held, the handler has ``request_deadline_seconds`` to answer;
   then the request is cancelled and answered 503 ``deadline_exceeded``. Ranking already
   running finishes in its thread and keeps its worker slot (``workers.WorkerPool``);
   ranking not yet started never starts.

Every search or feedback request not answered 2xx gets one log line here (``_failed``): a
refusal of the guard's, an error the edge answered (``edge.answered_code``), a deadline, or
no answer at all. An answered search's line is its handler's.

A refusal sent before the whole body was read says ``Connection: close`` and granian closes
the connection after it: the unread rest of the body would otherwise be parsed as the next
request on a keep-alive connection. A refusal after the body was read leaves the connection
open for the next request.

``/metrics`` is guarded by auth only when ``auth_metrics`` is set. ``/healthz``, ``/health``
and ``/readyz`` are always open (probes carry no credentials).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any, cast

import anyio
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import Gauge

from tool_selector.errors import (
    BadRequest,
    PayloadTooLarge,
    RequestError,
    RequestTimeout,
    ServiceUnavailable,
    Unauthorized,
)
from tool_selector.http.auth import KeyRing, tokens_from_headers
from tool_selector.http.edge import (
    GUARDED_PATHS,
    answered_code,
    contract_of,
    error_bytes,
    route_of,
)
from tool_selector.http.search_id import search_id
from tool_selector.http.state import LINT_IN_FLIGHT, AppState
from tool_selector.logs import log_request
from tool_selector_client.catalog_lint import LINT_PATH

METRICS_PATH = "/metrics"


class Guard:
    """The middleware; one instance per route, sharing ``state`` (slots and body bytes)."""

    def __init__(
        self,
        app: ASGIApp,
        runtime: AppState,
        keys: KeyRing,
        state: GuardState,
        lint: GuardState | None = None,
    ) -> None:
        self.app = app
        self.runtime = runtime
        self.keys = keys
        self.state = state
        #: The catalog reports' slots, apart from the searches': a report (seconds of CPU
        #: at thousands of tools) never takes a search's slot.
        self.lint = lint or GuardState()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path in GUARDED_PATHS:
            await self._search(scope, receive, send)
            return
        if path == METRICS_PATH and self.runtime.settings.auth_metrics:
            try:
                self._authenticate(scope)
            except RequestError as exc:
                await self._refuse(send, path, exc, close=True)
                return
        await self.app(scope, receive, send)

    def _authenticate(self, scope: Scope) -> None:
        """Every credential presented must be accepted (see ``auth.tokens_from_headers``)."""
        if not self.keys.enabled:
            return
        tokens = tokens_from_headers(scope["headers"])
        if not tokens:
            raise Unauthorized(
                "unauthorized", "missing service token (Authorization: Bearer or X-API-Key)"
            )
        if not self.keys.accepts_all(tokens):
            raise Unauthorized("unauthorized", "service token not accepted")

    async def _search(self, scope: Scope, receive: Receive, send: Send) -> None:
        reading = _BodyRead(self.state, self.runtime.metrics.body_bytes)
        answer = _Answer(send)
        try:
            self._authenticate(scope)
            body = await self._read_body(scope, receive, reading)
            await self._admitted(scope, body, receive, answer)
        except RequestError as exc:
            answer.code = exc.code
            await self._refuse(answer.send, scope["path"], exc, close=not reading.complete)
        finally:
            reading.release()
            if scope["path"] != LINT_PATH:
                self._failed(scope, answer)

    async def _admitted(self, scope: Scope, body: bytes, receive: Receive, answer: _Answer) -> None:
        settings = self.runtime.settings
        report = scope["path"] == LINT_PATH
        slots, cap = (self.lint, LINT_IN_FLIGHT) if report else (self.state, settings.max_in_flight)
        if not await self._admit(slots, cap, settings.admission_wait_ms / 1000, not report):
            raise self._overloaded(cap)
        answer.since = time.perf_counter()
        try:
            seconds = (
                settings.lint_deadline_seconds if report else settings.request_deadline_seconds
            )
            with anyio.move_on_after(seconds) as deadline:
                await self.app(scope, _replay(body, receive), answer.send)
            if deadline.cancelled_caught and answer.status is None:
                raise ServiceUnavailable("deadline_exceeded", f"no answer within {seconds:g} s")
        finally:
            slots.release()

    def _failed(self, scope: Scope, answer: _Answer) -> None:
        """The log line of a search or feedback request not answered 2xx (an answered search
        has the handler's): its id, route, contract, status (``None``: no answer was sent),
        error code and milliseconds, never a byte of its body (docs/security.md); and a
        search's ``error`` duration, under the contract of its path."""
        if answer.status is not None and answer.status < 400:
            return
        path, seconds = scope["path"], time.perf_counter() - answer.since
        contract = contract_of(path)
        if contract is not None:
            self.runtime.metrics.request_seconds.labels("error", contract).observe(seconds)
        log_request(
            self.runtime.logger,
            {
                "event": "error",
                "search_id": search_id(scope),
                "route": path,
                "contract": contract,
                "status": answer.status,
                "code": answer.code or answered_code(scope),
                "ms": round(seconds * 1000, 2),
            },
        )

    def _overloaded(self, cap: int) -> ServiceUnavailable:
        return ServiceUnavailable("overloaded", f"{cap} requests in flight; retry later")

    async def _admit(self, slots: GuardState, cap: int, wait: float, timed: bool) -> bool:
        """A slot of ``slots`` now, or within ``wait`` seconds; the wait is
        ``admission_wait_seconds``'s when ``timed`` (a search's, not a catalog report's)."""
        if slots.try_acquire(cap):
            return True
        began = time.perf_counter()
        admitted = await slots.acquire(wait)
        if timed:
            self.runtime.metrics.admission_wait.labels(
                "admitted" if admitted else "refused"
            ).observe(time.perf_counter() - began)
        return admitted

    async def _read_body(self, scope: Scope, receive: Receive, reading: _BodyRead) -> bytes:
        settings = self.runtime.settings
        cap = settings.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            raise _too_large(cap)
        chunks: list[bytes] = []
        try:
            with anyio.fail_after(settings.body_timeout_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise BadRequest(
                            "malformed_body",
                            "request body ended before it was complete, or its chunked "
                            "framing is broken",
                        )
                    chunk = cast("bytes", message.get("body", b""))
                    if reading.held + len(chunk) > cap:
                        raise _too_large(cap)
                    if not reading.take(len(chunk), settings.body_buffer_bytes):
                        raise ServiceUnavailable(
                            "overloaded",
                            f"{settings.body_buffer_bytes} bytes of request bodies buffered; "
                            "retry later",
                        )
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        reading.complete = True
                        return b"".join(chunks)
        except TimeoutError as exc:
            raise RequestTimeout(
                "request_timeout",
                f"request body not received within {settings.body_timeout_seconds:g} s",
            ) from exc

    async def _refuse(self, send: Send, path: str, exc: RequestError, *, close: bool) -> None:
        self.runtime.metrics.errors.labels(exc.code, route_of(path)).inc()
        headers = [(b"content-type", b"application/json")]
        if exc.status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        if exc.code == "overloaded":
            retry = str(self.runtime.settings.retry_after_seconds).encode()
            headers.append((b"retry-after", retry))
        if close:
            headers.append((b"connection", b"close"))
        payload = error_bytes(path, exc.code, exc.detail)
        headers.append((b"content-length", str(len(payload)).encode()))
        await send({"type": "http.response.start", "status": exc.status, "headers": headers})
        await send({"type": "http.response.body", "body": payload, "more_body": False})


class _Answer:
    """What the guard saw of one request's answer: the status sent (``None``: none yet), the
    code of the guard's own refusal, and since when it is timed: its arrival, then, once it
    holds a slot, that moment (where a search handler's own timing starts)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status: int | None = None
        self.code: str | None = None
        self.since = time.perf_counter()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self._send(message)


class _BodyRead:
    """One request's share of the process-wide body-byte budget, and whether its body is in."""

    def __init__(self, state: GuardState, gauge: Gauge) -> None:
        self.state = state
        self.gauge = gauge
        self.held = 0
        self.complete = False

    def take(self, size: int, budget: int) -> bool:
        """Count ``size`` more buffered bytes; False (nothing counted) past ``budget``."""
        if size and self.state.body_bytes + size > budget:
            return False
        self.state.body_bytes += size
        self.held += size
        self.gauge.inc(size)
        return True

    def release(self) -> None:
        self.state.body_bytes -= self.held
        self.gauge.dec(self.held)
        self.held = 0


class GuardState:
    """What every route's ``Guard`` in one process (one event loop) shares: the in-flight
    slots and the count of buffered body bytes.

    A freed slot goes straight to the longest-waiting request (no barging), so a waiter is
    never starved by later arrivals and ``in_flight`` never exceeds the cap.
    """

    def __init__(self) -> None:
        self.in_flight = 0
        #: Request body bytes buffered now (being received, waiting for a slot, or ranked).
        self.body_bytes = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_acquire(self, cap: int) -> bool:
        """Take a slot if one is free and nobody is waiting for one."""
        if self.in_flight < cap and not self._waiters:
            self.in_flight += 1
            return True
        return False

    async def acquire(self, wait: float) -> bool:
        """Wait up to ``wait`` seconds for a slot to be handed over; True once it is held."""
        if wait <= 0:
            return False
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(handed)
        try:
            with anyio.move_on_after(wait):
                await handed
        except BaseException:
            self._give_back(handed)  # cancelled from outside: never keep a slot nobody uses
            raise
        if handed.done() and not handed.cancelled():
            return True
        self._give_back(handed)
        return False

    def release(self) -> None:
        """Free a slot: hand it to the longest waiter, or count it free."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.in_flight -= 1

    def _give_back(self, handed: asyncio.Future[None]) -> None:
        if handed.done() and not handed.cancelled():
            self.release()
            return
        handed.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(handed)


def guard_middleware(runtime: AppState, keys: KeyRing) -> Any:
    """A Litestar middleware definition: ``Litestar(middleware=[guard_middleware(...)])``."""
    from litestar.middleware import DefineMiddleware  # noqa: PLC0415

    return DefineMiddleware(
        Guard, runtime=runtime, keys=keys, state=GuardState(), lint=GuardState()
    )


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(cap: int) -> PayloadTooLarge:
    return PayloadTooLarge("payload_too_large", f"request body is larger than {cap} bytes")
