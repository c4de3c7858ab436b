"""Who may call the service: service tokens, the TLS/mTLS configuration, and the startup gate.

Tokens come from ``TOOL_SELECTOR_API_KEYS`` (comma-separated) and/or
``TOOL_SELECTOR_API_KEYS_FILE`` (one per line, ``#`` comments), so a new key can be added
before the old one is removed (rotation). The file is re-read when its modification time or
size changes; ``SIGHUP`` makes granian respawn its workers, which re-reads everything.

Every credential a request presents must be accepted: with both ``Authorization: Bearer``
and ``X-API-Key`` (or either twice), all of them (``tokens_from_headers``). A presented token
is compared with every configured key in constant time: both sides are
hashed with SHA-256 first (equal lengths), then ``hmac.compare_digest`` runs over all keys
without stopping at the first match.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tool_selector.errors import ConfigError
from tool_selector.settings import Settings

#: How often (seconds) the keys file is stat()ed for changes, at most.
FILE_CHECK_INTERVAL = 1.0


def _digest(token: str | bytes) -> bytes:
    raw = token.encode() if isinstance(token, str) else token
    return hashlib.sha256(raw).digest()


#: A comment in a keys file: ``#`` at the start of a line or after white space. A ``#``
#: inside a token is part of it (cutting there would leave a shorter, weaker key).
_COMMENT = re.compile(r"(?:^|\s)#.*")


def parse_keys(text: str, separator: str | None = ",") -> tuple[str, ...]:
    """Keys from comma-separated text (``separator``) or lines (``None``); blanks dropped."""
    parts = text.split(separator) if separator else text.splitlines()
    keys = (_COMMENT.sub("", p).strip() if separator is None else p.strip() for p in parts)
    return tuple(k for k in keys if k)


class KeyRing:
    """The accepted service tokens; thread-safe, reloads its file when it changes."""

    def __init__(self, keys: Iterable[str] = (), path: Path | None = None) -> None:
        self._static = tuple(_digest(k) for k in keys)
        self._path = path
        self._file_keys: tuple[bytes, ...] = ()
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        self._lock = threading.Lock()
        if path is not None:
            self._reload(force=True)

    @classmethod
    def from_settings(cls, settings: Settings) -> KeyRing:
        """The ring the settings describe; a missing keys file fails at startup."""
        path = Path(settings.api_keys_file) if settings.api_keys_file else None
        if path is not None and not path.is_file():
            raise ConfigError(f"TOOL_SELECTOR_API_KEYS_FILE={str(path)!r}: not a readable file")
        return cls(parse_keys(settings.api_keys), path)

    @property
    def enabled(self) -> bool:
        """True when keys or a keys file are configured (then every guarded request needs one).

        A keys file counts even while it holds no keys: emptying or truncating it mid-rotation
        must refuse everyone, never switch auth off.
        """
        return bool(self._static) or self._path is not None

    def accepts(self, token: str | bytes) -> bool:
        """Constant-time check of ``token`` against every key (no early exit)."""
        self._maybe_reload()
        presented = _digest(token)
        ok = False
        for key in (*self._static, *self._file_keys):
            ok |= hmac.compare_digest(presented, key)
        return ok

    def accepts_all(self, tokens: Iterable[bytes]) -> bool:
        """True when there is at least one token and every one is accepted (all are checked)."""
        verdicts = [self.accepts(token) for token in tokens]
        return bool(verdicts) and all(verdicts)

    def _maybe_reload(self) -> None:
        if self._path is not None and time.monotonic() - self._checked >= FILE_CHECK_INTERVAL:
            self._reload(force=False)

    def _reload(self, *, force: bool) -> None:
        if self._path is None:
            return
        with self._lock:
            self._checked = time.monotonic()
            try:
                st = self._path.stat()
                stamp = (st.st_mtime_ns, st.st_size)
                if not force and stamp == self._stamp:
                    return
                text = self._path.read_text()
            except OSError:
                return  # keep the last good keys; a rotation that briefly removes the file is ok
            self._file_keys = tuple(_digest(k) for k in parse_keys(text, None))
            self._stamp = stamp


def tokens_from_headers(headers: Iterable[tuple[bytes, bytes]]) -> tuple[bytes, ...]:
    """Every credential the request presents (raw ASGI headers), in header order.

    The rule when several are present (e.g. both ``Authorization`` and ``X-API-Key``): each
    one must be an accepted key, so the answer never depends on which header comes first.
    Each ``Authorization`` header yields its Bearer token, and each ``X-API-Key`` header its
    value; an ``Authorization`` of another scheme, or an empty one, yields ``b""``, which no
    key equals (blank keys are dropped when keys are parsed), so it is refused.
    """
    tokens: list[bytes] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"authorization":
            scheme, _, rest = value.strip().partition(b" ")
            tokens.append(rest.strip() if scheme.lower() == b"bearer" else b"")
        elif lowered == b"x-api-key":
            tokens.append(value.strip())
    return tuple(tokens)


@dataclass(frozen=True, slots=True)
class TLSConfig:
    """Server certificate and, optionally, the CA that client certificates must chain to."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def granian_kwargs(self) -> dict[str, Any]:
        """Arguments for ``granian.Granian``: client verification is on whenever a CA is set.

        granian's ``ssl_ca`` without ``ssl_client_verify`` admits clients that present no
        certificate, and ``ssl_client_verify`` without a CA admits everyone; neither half
        state can be expressed here.
        """
        kwargs: dict[str, Any] = {"ssl_cert": self.cert, "ssl_key": self.key}
        if self.client_ca is not None:
            kwargs.update(ssl_ca=self.client_ca, ssl_client_verify=True)
        return kwargs


def tls_config(settings: Settings) -> TLSConfig | None:
    """The TLS setup the settings ask for, or ``None`` for plain HTTP; inconsistency fails."""
    cert, key, ca = settings.tls_cert, settings.tls_key, settings.tls_client_ca
    if not (cert or key or ca):
        return None
    if not (cert and key):
        raise ConfigError(
            "TLS needs both TOOL_SELECTOR_TLS_CERT and TOOL_SELECTOR_TLS_KEY "
            "(--tls-cert and --tls-key); a client CA alone cannot serve HTTPS"
        )
    named = {"TOOL_SELECTOR_TLS_CERT": cert, "TOOL_SELECTOR_TLS_KEY": key}
    if ca:
        named["TOOL_SELECTOR_TLS_CLIENT_CA"] = ca
    for env_key, value in named.items():
        if not os.path.isfile(value):
            raise ConfigError(f"{env_key}={value!r}: not a readable file")
    _check_pem(cert, key, ca)
    return TLSConfig(Path(cert), Path(key), Path(ca) if ca else None)


def _check_pem(cert: str, key: str, ca: str) -> None:
    """Parse the PEM files now: granian's worker panics on them after it has started."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(
            f"TOOL_SELECTOR_TLS_CERT={cert!r} / TOOL_SELECTOR_TLS_KEY={key!r}: "
            f"not a PEM certificate chain and its private key ({exc})"
        ) from exc
    if ca:
        try:
            context.load_verify_locations(cafile=ca)
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(
                f"TOOL_SELECTOR_TLS_CLIENT_CA={ca!r}: no PEM CA certificate in it ({exc})"
            ) from exc


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings, keys: KeyRing, tls: TLSConfig | None) -> None:
    """Refuse to serve a non-loopback address to anyone at all, unless told to."""
    if is_loopback(settings.host) or settings.allow_unauthenticated:
        return
    if keys.enabled or (tls is not None and tls.client_ca is not None):
        return
    raise ConfigError(
        f"refusing to serve {settings.host} without authentication: set "
        "TOOL_SELECTOR_API_KEYS / TOOL_SELECTOR_API_KEYS_FILE, or --tls-client-ca for mTLS, "
        "or pass --allow-unauthenticated (TOOL_SELECTOR_ALLOW_UNAUTHENTICATED=true)"
    )
