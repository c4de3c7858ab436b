"""Sync and async clients for ``POST /v1/tool-discovery/search`` that never raise.

Every call returns a ``Selection``: our picks as the caller's raw definitions, or, on any
failure, every deferred tool plus a reason from a closed set (``core.FAIL_REASONS``).
There are no retries; one overall deadline bounds the whole call (httpx's own timeouts are
per phase, so they are only a backstop): the async client wraps the exchange in an anyio
deadline, the sync client runs it on a worker thread and stops waiting at the deadline;
the worker's socket reads and writes are bounded by the same deadline, so a server that
trickles its headers cannot keep a worker (and every call queued behind it) busy. A small
circuit breaker skips the service after repeated failures.

``feedback`` tells the service which tools of a selection's answer the model then called
(its search id names the search); it never raises either and does not feed the breaker.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import anyio
import httpcore
import httpx

from tool_selector_client.breaker import CircuitBreaker
from tool_selector_client.core import (
    MAX_RESPONSE_BYTES,
    NO_CONTROLS,
    Controls,
    FailReason,
    FeedbackReason,
    Prepared,
    Reported,
    Selection,
    clamp_top_k,
    fail_open,
    feedback_body,
    interpret,
    listed,
    permitted,
    prepare,
    reported,
    unhealthy,
)
from tool_selector_client.wire import FEEDBACK_PATH, SCOPE_HEADER, SEARCH_ID_HEADER, SEARCH_PATH

__all__ = ["AsyncSelectorClient", "SelectorClient"]

CertTypes = str | tuple[str, str] | tuple[str, str, str]
#: An answer as the exchange read it: its status, its body, its search id.
Exchanged = tuple[int, bytes, str]
#: Provider search calls whose answers a client keeps for their feedback (``note_search``).
NOTED = 1024


class _DeadlineExceeded(Exception):
    pass


_WORKER = threading.local()


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of this worker's deadline; ``error`` once it is gone."""
    deadline: float | None = getattr(_WORKER, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        budget = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, budget))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync sockets, each connect/read/write bounded by the worker's deadline."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        budget = _left(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, budget, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        budget = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, budget, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport, its connection pool on the deadline-bounded backend."""

    def __init__(self, verify: bool | ssl.SSLContext) -> None:
        super().__init__(verify=verify)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=100,
            max_keepalive_connections=20,
            network_backend=_DeadlineBackend(),
        )


class _TooLarge(Exception):
    pass


class _Base:
    """Configuration and bookkeeping shared by both clients."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout_s: float = 1.0,
        max_search_results: int = 5,
        verify: bool | str | ssl.SSLContext = True,
        cert: CertTypes | None = None,
        enabled: bool = True,
        breaker: CircuitBreaker | None = None,
        scope: str | None = None,
        noted: int = NOTED,
    ) -> None:
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float):
            raise TypeError(f"timeout_s must be a number of seconds, got {timeout_s!r}")
        if not 0 < timeout_s < float("inf"):  # one deadline bounds every call: never none
            raise ValueError(f"timeout_s must be positive and finite, got {timeout_s!r}")
        self.url = url.rstrip("/") + SEARCH_PATH
        self.feedback_url = url.rstrip("/") + FEEDBACK_PATH
        self.timeout_s = timeout_s
        self.max_search_results = max_search_results
        self.enabled = enabled
        self.breaker = breaker if breaker is not None else CircuitBreaker()
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        if scope:
            self._headers[SCOPE_HEADER] = scope
        self._noted: OrderedDict[str, tuple[str, tuple[str, ...]]] = OrderedDict()
        self._noted_most = max(1, noted)
        #: Noted searches pushed out before their feedback was due (``noted`` too small).
        self.noted_dropped = 0
        self._noted_lock = threading.Lock()
        self._tls = tls_context(verify, cert)

    def _start(
        self,
        pattern: str,
        tools: Sequence[Any],
        top_k: int | None,
        always_keep: Iterable[str],
        controls: Controls,
        *,
        started: float,
    ) -> Prepared | Selection:
        """The request to send, or the answer already known without one: off, nothing to
        ask, the breaker open, or a bug here (failing open all the same, with the permitted
        tools only: filters that cannot be applied permit none)."""
        try:
            tools = permitted(listed(tools), controls.filters)
        except Exception as exc:  # the policy holds even against a bug here
            return _crashed([], exc, started)
        try:
            if not self.enabled:
                return fail_open(tools, "disabled")
            limit = clamp_top_k(top_k, self.max_search_results)
            prepared = prepare(pattern, tools, limit, always_keep, controls)
            if isinstance(prepared, Selection):
                return prepared
            if not self.breaker.allow():
                return fail_open(tools, "circuit_open")
            return prepared
        except Exception as exc:  # a bug here must not reach the proxy either
            return _crashed(tools, exc, started)

    def _conclude(
        self, prepared: Prepared, started: float, exchanged: Exchanged | Exception
    ) -> Selection:
        """The selection for what the exchange gave, its answer or its error, fed to the
        breaker; never raises."""
        try:
            latency_s = time.monotonic() - started
            if isinstance(exchanged, Exception):
                reason, detail = _reason_of(exchanged)
                selection = fail_open(prepared.tools, reason, latency_s=latency_s, detail=detail)
            else:
                status, body, sid = exchanged
                selection = interpret(prepared, status, body, latency_s, sid)
            self.breaker.record(not unhealthy(selection))
            return selection
        except Exception as exc:  # a bug here must not reach the proxy either
            return _crashed(prepared.tools, exc, started)

    def note_search(self, key: str, selection: Selection) -> None:
        """Remember a provider search call's answer (its search id and names) by the
        provider's call id, so a later hook call of the conversation can report what the
        model called after it (``report_calls``); the last ``noted`` (a constructor option,
        ``NOTED`` by default) are kept, and ``noted_dropped`` counts the ones pushed out."""
        if not key or not selection.search_id:
            return
        with self._noted_lock:
            self._noted[key] = (selection.search_id, selection.names)
            while len(self._noted) > self._noted_most:
                self._noted.popitem(last=False)
                self.noted_dropped += 1

    def _due(self, calls: Mapping[str, Sequence[str]]) -> list[tuple[str, list[str]]]:
        """The feedback owed for ``calls`` (search call id -> tools called after it): for
        each noted search, its search id and the called tools its answer held; each once."""
        owed = []
        with self._noted_lock:
            for key, called in calls.items():
                noted = self._noted.pop(key, None)
                if noted is not None:
                    sid, names = noted
                    owed.append((sid, [n for n in called if n in names]))
        return owed

    def _timeouts(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout_s)


def tls_context(
    verify: bool | str | ssl.SSLContext, cert: CertTypes | None
) -> bool | ssl.SSLContext:
    """httpx's ``verify`` for a CA bundle path and/or a client certificate (mTLS).

    ``verify``: True (system CAs), False (no check), a CA bundle path, or a ready context.
    ``cert``: a PEM file holding cert and key, ``(cert, key)`` or ``(cert, key, password)``.
    A bad path raises here, at construction, never in ``select``.
    """
    if isinstance(verify, ssl.SSLContext):
        ctx = verify
    elif cert is None and isinstance(verify, bool):
        return verify
    else:
        ctx = ssl.create_default_context(cafile=verify if isinstance(verify, str) else None)
        if verify is False:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
    if isinstance(cert, str):
        ctx.load_cert_chain(cert)
    elif cert is not None:
        ctx.load_cert_chain(*cert)
    return ctx


def _crashed(tools: list[Any], exc: Exception, started: float) -> Selection:
    """A bug in the client itself: fail open all the same."""
    detail = f"client error: {exc!r}"[:200]
    return fail_open(tools, "bad_response", latency_s=time.monotonic() - started, detail=detail)


def _search_id(response: httpx.Response) -> str:
    """The answer's search id (``X-Tool-Selector-Search-Id``; empty when absent)."""
    return str(response.headers.get(SEARCH_ID_HEADER, ""))


def _unreported(exc: BaseException) -> Reported:
    """A feedback the exchange lost: why, as ``core.FeedbackReason`` says it."""
    reason, detail = _reason_of(exc)
    lost: FeedbackReason = reason if reason in ("timeout", "connect_error") else "bad_response"
    return Reported(False, lost, detail=detail)


def _reason_of(exc: BaseException) -> tuple[FailReason, str]:
    if isinstance(exc, httpx.TimeoutException | _DeadlineExceeded | FutureTimeout | TimeoutError):
        return "timeout", type(exc).__name__
    if isinstance(exc, httpx.TransportError):
        return "connect_error", f"{type(exc).__name__}: {exc}"[:200]
    if isinstance(exc, _TooLarge):
        return "bad_response", "response body too large"
    return "bad_response", f"{type(exc).__name__}: {exc}"[:200]


class SelectorClient(_Base):
    """Blocking client. Thread-safe; ``close()`` it (or use ``with``) when done.

    ``workers`` bounds the threads that carry requests (started on demand, so a high bound
    costs nothing while idle); a call that finds them all busy waits at most its deadline
    and then fails open with ``timeout``. Size it for the proxy's concurrent searches.
    """

    def __init__(
        self,
        url: str,
        *,
        workers: int = 32,
        transport: httpx.BaseTransport | None = None,
        **options: Any,
    ) -> None:
        super().__init__(url, **options)
        self._http = httpx.Client(
            timeout=self._timeouts(),
            verify=self._tls,
            transport=transport or _DeadlineTransport(self._tls),
        )
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tool-selector")

    def select(
        self,
        pattern: str,
        tools: Sequence[Any],
        top_k: int | None = None,
        always_keep: Iterable[str] = (),
        controls: Controls = NO_CONTROLS,
    ) -> Selection:
        """Pick tools for ``pattern`` among the raw ``tools``; never raises. ``controls``:
        filters, budget, ``min_score``, context (``Controls``; the filters hold on fail-open)."""
        started = time.monotonic()
        prepared = self._start(pattern, tools, top_k, always_keep, controls, started=started)
        if isinstance(prepared, Selection):
            return prepared
        deadline = started + self.timeout_s
        try:
            future = self._pool.submit(self._exchange, prepared.body, deadline)
        except Exception as exc:  # a closed client fails open too
            return _crashed(prepared.tools, exc, started)
        try:
            exchanged: Exchanged | Exception = future.result(
                timeout=max(0.0, deadline - time.monotonic())
            )
        except Exception as exc:  # the worker's failure, whatever it is, fails open
            future.cancel()
            exchanged = exc
        return self._conclude(prepared, started, exchanged)

    def feedback(self, search: Selection | str, called: Iterable[str]) -> Reported:
        """Tell the service which tools of ``search``'s answer (a ``Selection``, or its
        ``search_id``) the model called after it (none: ``[]``); never raises."""
        sid = search.search_id if isinstance(search, Selection) else search
        if not sid:
            return Reported(False, "no_search")
        deadline = time.monotonic() + self.timeout_s
        try:
            future = self._pool.submit(
                self._exchange, feedback_body(sid, called), deadline, self.feedback_url
            )
            status, body, _ = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except Exception as exc:  # the feedback is lost, never the caller's turn
            return _unreported(exc)
        return reported(status, body)

    def report_calls(self, calls: Mapping[str, Sequence[str]]) -> None:
        """Send the feedback owed for ``calls`` (``note_search``) on the worker threads,
        without waiting: a lost feedback costs the caller nothing. None while the breaker
        is open (they would hold workers a search needs); they stay owed."""
        if self.breaker.state == "open":
            return
        for sid, called in self._due(calls):
            deadline = time.monotonic() + self.timeout_s
            with contextlib.suppress(Exception):  # a closed pool loses only the feedback
                self._pool.submit(
                    self._exchange, feedback_body(sid, called), deadline, self.feedback_url
                )

    def _exchange(self, body: bytes, deadline: float, url: str | None = None) -> Exchanged:
        if time.monotonic() >= deadline:
            raise _DeadlineExceeded
        _WORKER.deadline = deadline
        try:
            with self._http.stream(
                "POST", url or self.url, content=body, headers=self._headers
            ) as resp:
                chunks: list[bytes] = []
                size = 0
                for chunk in resp.iter_bytes():
                    if time.monotonic() >= deadline:
                        raise _DeadlineExceeded
                    size += len(chunk)
                    if size > MAX_RESPONSE_BYTES:
                        raise _TooLarge
                    chunks.append(chunk)
                return resp.status_code, b"".join(chunks), _search_id(resp)
        finally:
            _WORKER.deadline = None

    def close(self) -> None:
        """Release the connection pool and the worker threads, once the calls and feedback
        already handed to them are done (each within its deadline: at most ``timeout_s``)."""
        self._pool.shutdown(wait=True)
        self._http.close()

    def __enter__(self) -> SelectorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncSelectorClient(_Base):
    """Async client (asyncio or trio via anyio). ``await aclose()`` when done."""

    def __init__(
        self, url: str, *, transport: httpx.AsyncBaseTransport | None = None, **options: Any
    ) -> None:
        super().__init__(url, **options)
        self._http = httpx.AsyncClient(
            timeout=self._timeouts(), verify=self._tls, transport=transport
        )

    async def select(
        self,
        pattern: str,
        tools: Sequence[Any],
        top_k: int | None = None,
        always_keep: Iterable[str] = (),
        controls: Controls = NO_CONTROLS,
    ) -> Selection:
        """Pick tools for ``pattern`` among the raw ``tools``; never raises. ``controls``:
        filters, budget, ``min_score``, context (``Controls``; the filters hold on fail-open)."""
        started = time.monotonic()
        prepared = self._start(pattern, tools, top_k, always_keep, controls, started=started)
        if isinstance(prepared, Selection):
            return prepared
        try:
            with anyio.fail_after(max(0.0, started + self.timeout_s - time.monotonic())):
                exchanged: Exchanged | Exception = await self._exchange(prepared.body)
        except Exception as exc:  # a timeout, the connection, the body: each fails open
            exchanged = exc
        return self._conclude(prepared, started, exchanged)

    async def feedback(self, search: Selection | str, called: Iterable[str]) -> Reported:
        """``SelectorClient.feedback``, awaited."""
        sid = search.search_id if isinstance(search, Selection) else search
        if not sid:
            return Reported(False, "no_search")
        try:
            with anyio.fail_after(self.timeout_s):
                body = feedback_body(sid, called)
                status, answer, _ = await self._exchange(body, self.feedback_url)
        except Exception as exc:  # the feedback is lost, never the caller's turn
            return _unreported(exc)
        return reported(status, answer)

    async def report_calls(self, calls: Mapping[str, Sequence[str]]) -> None:
        """Send the feedback owed for ``calls`` (``note_search``) side by side, each within
        ``timeout_s``; none while the breaker is open (they stay owed); never raises. The
        async hooks run it beside their search, so the call keeps its one deadline."""
        if self.breaker.state == "open":
            return
        async with anyio.create_task_group() as group:
            for sid, called in self._due(calls):
                group.start_soon(self.feedback, sid, called)

    async def _exchange(self, body: bytes, url: str | None = None) -> Exchanged:
        async with self._http.stream(
            "POST", url or self.url, content=body, headers=self._headers
        ) as resp:
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise _TooLarge
                chunks.append(chunk)
            return resp.status_code, b"".join(chunks), _search_id(resp)

    async def aclose(self) -> None:
        """Release the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncSelectorClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
