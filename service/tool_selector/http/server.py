"""Starting the server: the granian options the settings ask for, and granian's start.

The framework lives in ``http/`` alone (STYLE.md, ``tests/unit/test_architecture.py``): the
command line (``offline/cli.py``, ``offline/security_cli.py``) parses flags and checks them,
then asks this module for the options and the start. granian is imported when a server is
started, so the other commands never load it.
"""

from __future__ import annotations

import os
from typing import Any

from tool_selector.http.auth import TLSConfig
from tool_selector.settings import Settings

#: The app factory granian starts in its worker (``--factory``).
APP_FACTORY = "tool_selector.http.app:app_from_env"


def server_options(settings: Settings, tls: TLSConfig | None) -> dict[str, Any]:
    """granian keyword arguments: TLS (``TLSConfig.granian_kwargs``, client verification
    whenever a CA is set) and the header read timeout (``header_timeout_seconds``)."""
    from granian.http import HTTP1Settings  # noqa: PLC0415

    options: dict[str, Any] = tls.granian_kwargs() if tls else {}
    timeout_ms = max(1, round(settings.header_timeout_seconds * 1000))
    options["http1_settings"] = HTTP1Settings(header_read_timeout=timeout_ms)
    return options


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
