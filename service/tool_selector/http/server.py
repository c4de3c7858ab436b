"""Starting the server: the granian options the settings ask for, the address checked, and
granian's start.

The framework lives in ``http/`` alone (STYLE.md, ``tests/unit/test_architecture.py``): the
command line (``offline/cli.py``, ``offline/security_cli.py``) parses flags and checks them,
then asks this module for the options and the start. granian is imported when a server is
started, so the other commands never load it.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from typing import Any

from tool_selector.errors import ConfigError
from tool_selector.http.auth import TLSConfig
from tool_selector.settings import Settings

#: The app factory granian starts in its worker (``--factory``).
APP_FACTORY = "tool_selector.http.app:app_from_env"
#: Why a bind was refused, by errno, and the fix: ``str.format`` templates of ``_refusal``.
_BIND_ERRORS = {
    errno.EADDRINUSE: "port {port} on {host} is in use (another tool-selector or another "
    "program holds it): stop it, or pick another port ({ports})",
    errno.EADDRNOTAVAIL: "{host} is not an address of this machine: pick one ({hosts})",
    errno.EACCES: "port {port} on {host} needs privileges this user lacks (ports below 1024 "
    "do): pick 1024 or above ({ports})",
}
_NOT_BOUND = "cannot bind port {port} on {host} ({why}): pick another ({ports}; {hosts})"


def server_options(settings: Settings, tls: TLSConfig | None) -> dict[str, Any]:
    """granian keyword arguments: TLS (``TLSConfig.granian_kwargs``, client verification
    whenever a CA is set) and the header read timeout (``header_timeout_seconds``)."""
    from granian.http import HTTP1Settings  # noqa: PLC0415

    options: dict[str, Any] = tls.granian_kwargs() if tls else {}
    timeout_ms = max(1, round(settings.header_timeout_seconds * 1000))
    options["http1_settings"] = HTTP1Settings(header_read_timeout=timeout_ms)
    return options


def check_address(host: str, port: int) -> None:
    """``ConfigError``, one line naming the problem and the fix, when granian could not listen
    on ``host``:``port`` (granian's own error is a Rust backtrace).

    The probe binds as granian does (``SO_REUSEADDR``: connections of a server just stopped,
    in ``TIME_WAIT``, do not make the port look busy) but without granian's ``SO_REUSEPORT``,
    with which a second ``serve`` of the same user binds the port too and silently shares its
    connections with the first. It never listens, so closing it leaves the port free for
    granian; a program that takes the port in between meets granian's own error."""
    try:
        version = ipaddress.ip_address(host).version
    except ValueError:
        raise _refusal(
            "host {host!r} is not an IP address: pick one ({hosts})", host, port
        ) from None
    if not 0 <= port <= 65535:
        raise _refusal("port {port} is not 0-65535: pick one ({ports})", host, port)
    with socket.socket(socket.AF_INET6 if version == 6 else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            template = _BIND_ERRORS.get(exc.errno or 0, _NOT_BOUND)
            raise _refusal(template, host, port, exc.strerror or str(exc)) from exc


def _refusal(template: str, host: str, port: int, why: str = "") -> ConfigError:
    """The one line of a refused address, with where a port or address is chosen."""
    return ConfigError(
        template.format(
            host=host,
            port=port,
            why=why,
            ports="--port N, TOOL_SELECTOR_PORT=N or PORT=N make run",
            hosts="--host, TOOL_SELECTOR_HOST or HOST=ADDR make run; 127.0.0.1: this machine "
            "only, 0.0.0.0: every interface",
        )
    )


def serve(
    settings: Settings, host: str | None, port: int | None, options: dict[str, Any] | None = None
) -> int:
    """Serve the app with granian (one worker, uvloop) until it stops; 0 when it does."""
    from granian import Granian  # noqa: PLC0415
    from granian.constants import Interfaces, Loops  # noqa: PLC0415

    host = host or settings.host
    port = settings.port if port is None else port
    # granian's factory re-reads the environment in the worker, so pass overrides through it
    os.environ["TOOL_SELECTOR_HOST"] = host
    os.environ["TOOL_SELECTOR_PORT"] = str(port)
    Granian(
        APP_FACTORY,
        factory=True,
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        workers=1,
        loop=Loops.uvloop,
        log_access=False,
        **(options or {}),
    ).serve()
    return 0
