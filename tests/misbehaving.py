"""A real HTTP server on loopback that misbehaves on request, for the client's fail-open tests.

The request's ``pattern`` names the behaviour: ``trickle`` (headers, then one body byte every
50 ms), ``hang`` (read the request, never answer), ``reset`` (TCP RST instead of an answer),
``status_500``, ``invalid_json``, ``unknown_names``, ``empty``; anything else answers with the
first tool sent.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from typing import Any

_OK = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {n}\r\n\r\n"


class MisbehavingServer:
    """Accepts connections on a free loopback port; one daemon thread per connection."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.1)
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self._sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.requests: list[dict[str, Any]] = []
        self._accept = threading.Thread(target=self._serve, daemon=True)
        self._accept.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _handle(self, conn: socket.socket) -> None:
        if self._tls is not None:
            conn.settimeout(5)
            try:
                conn = self._tls.wrap_socket(conn, server_side=True)
            except (ssl.SSLError, OSError):
                conn.close()
                return
        with conn:
            conn.settimeout(5)
            while not self._stop.is_set():
                request = _read_request(conn)
                if request is None:
                    return
                self.requests.append(request)
                if not self._answer(conn, request):
                    return

    def _answer(self, conn: socket.socket, request: dict[str, Any]) -> bool:
        """Answer one request; False when the connection must end."""
        body = request.get("body") or {}
        behaviour = body.get("pattern", "")
        if behaviour == "hang":
            self._stop.wait()
            return False
        if behaviour == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if behaviour == "trickle":
            conn.sendall(_OK.format(n=1000).encode())
            while not self._stop.is_set():
                try:
                    conn.sendall(b" ")
                except OSError:
                    return False
                time.sleep(0.05)
            return False
        if behaviour == "status_500":
            payload = b'{"code":"internal_error","detail":"boom"}'
            head = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
            conn.sendall(f"{head}Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
            return True
        answers: dict[str, bytes] = {
            "invalid_json": b'{"selected_names": [',
            "unknown_names": b'{"selected_names": ["not_sent", "also_not_sent"]}',
            "empty": b'{"selected_names": []}',
        }
        first = [t["name"] for t in body.get("tools", [])[:1]]
        payload = answers.get(behaviour, json.dumps({"selected_names": first}).encode())
        conn.sendall(_OK.format(n=len(payload)).encode() + payload)
        return True

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        self._accept.join(5)
        for t in self._threads:
            t.join(5)


def _read_request(conn: socket.socket) -> dict[str, Any] | None:
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            rest += chunk
    except OSError:
        return None
    return {"line": lines[0], "headers": headers, "body": json.loads(rest) if rest else None}
