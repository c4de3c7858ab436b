"""``serve``'s address check: refuses a held port, never makes a free one look busy."""

from __future__ import annotations

import socket

import pytest

from tests.support import free_port
from tool_selector.errors import ConfigError
from tool_selector.http.server import check_address


def granian_bind(port: int) -> socket.socket:
    """A listener bound with granian's options (``SO_REUSEPORT``, ``SO_REUSEADDR``)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_free_port_passes_and_granian_can_bind_it_at_once() -> None:
    port = free_port()
    check_address("127.0.0.1", port)
    granian_bind(port).close()


def test_a_port_left_in_time_wait_by_a_stopped_server_is_free() -> None:
    server = granian_bind(free_port())
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server closes first: its side waits in TIME_WAIT
    server.close()
    client.close()
    check_address("127.0.0.1", port)


def test_a_port_another_serve_holds_is_refused_though_granian_would_share_it() -> None:
    with granian_bind(free_port()) as first:
        port = first.getsockname()[1]
        granian_bind(port).close()  # what a second granian does: it binds too
        with pytest.raises(ConfigError, match=f"port {port} on 127.0.0.1 is in use"):
            check_address("127.0.0.1", port)


@pytest.mark.parametrize(
    ("host", "named"),
    [("localhost", "is not an IP address"), ("192.0.2.1", "is not an address of this machine")],
    ids=["name", "foreign"],
)
def test_an_address_granian_cannot_bind_is_refused(host: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        check_address(host, free_port())
