"""Raw-socket HTTP/1.1 for the cases a client library won't make: stalled bodies, slow headers."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from tests.support import ServiceProcess

SEARCH = "/v1/tool-discovery/search"
BODY = json.dumps(
    {"pattern": "send slack message", "tools": [{"name": "read_file"}, {"name": "slack_send"}]}
).encode()


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes


def connect(service: ServiceProcess, timeout: float = 10) -> socket.socket:
    parts = urlsplit(service.url)
    return socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout)


def head(
    length: int, headers: dict[str, str] | None = None, path: str = SEARCH, method: str = "POST"
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: test", "Content-Type: application/json"]
    lines.append(f"Content-Length: {length}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(sock: socket.socket) -> RawResponse:
    """One response (Content-Length framed); raises ``ConnectionError`` on EOF before it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {data!r}")
        data += chunk
    head_bytes, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.decode().split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return RawResponse(int(status_line.split()[1]), headers, rest[:length])


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the peer closes (EOF or reset) before ``seconds`` pass, ignoring any reply."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False
