"""The security flags of ``tool-selector serve`` and the checks that run before the server
starts (``http.server`` starts it).

``--tls-cert``/``--tls-key`` serve HTTPS; ``--tls-client-ca`` adds mandatory client
certificates (mTLS). Each flag overrides its ``TOOL_SELECTOR_TLS_*`` setting. Inconsistent
combinations, missing files, and an unauthenticated non-loopback bind fail here, before
anything listens.
"""

from __future__ import annotations

import argparse
from typing import Any

from tool_selector.errors import ConfigError
from tool_selector.http.auth import KeyRing, check_exposure, tls_config
from tool_selector.http.server import server_options
from tool_selector.offline.arguments import seconds
from tool_selector.settings import Settings


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the TLS and exposure flags to the ``serve`` sub-command."""
    parser.add_argument("--tls-cert", help="PEM server certificate (TOOL_SELECTOR_TLS_CERT)")
    parser.add_argument("--tls-key", help="PEM server key (TOOL_SELECTOR_TLS_KEY)")
    parser.add_argument(
        "--tls-client-ca",
        help="PEM CA that client certificates must chain to; makes them mandatory "
        "(TOOL_SELECTOR_TLS_CLIENT_CA)",
    )
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        default=None,
        help="serve a non-loopback address with no tokens and no mTLS",
    )


def apply_security_arguments(
    settings: Settings, args: argparse.Namespace
) -> tuple[Settings, dict[str, Any]]:
    """Settings with the flags applied, plus the server's options (``http.server``: TLS,
    header timeout).

    Raises ``ConfigError`` for half-configured TLS, unreadable files, or an open bind.
    """
    changes: dict[str, Any] = {
        "tls_cert": args.tls_cert,
        "tls_key": args.tls_key,
        "tls_client_ca": args.tls_client_ca,
        "allow_unauthenticated": args.allow_unauthenticated,
        "host": args.host,
    }
    settings = settings.with_overrides(**{k: v for k, v in changes.items() if v is not None})
    tls = tls_config(settings)
    check_exposure(settings, KeyRing.from_settings(settings), tls)
    return settings, server_options(settings, tls)


def add_probe_command(sub: Any) -> None:
    """Register ``tool-selector probe PATH`` (Kubernetes exec probe that works under mTLS)."""
    probe = sub.add_parser("probe", help="GET a local path (exit 0 on 200); for exec probes")
    probe.add_argument("path", nargs="?", default="/healthz", help="path to GET")
    probe.add_argument("--timeout", type=seconds, default=2.0, help="seconds (default 2)")


def probe(settings: Settings, path: str, timeout: float = 2.0) -> int:
    """GET ``path`` on this pod's own port; exit status 0 when it answers 200.

    Under mTLS the kubelet's HTTP probes cannot present a client certificate, so the probe
    runs inside the pod and presents the server's own certificate (issue it with both the
    server and client auth usages). The server's certificate is not verified: the peer is
    this process, on loopback.
    """
    import http.client  # noqa: PLC0415
    import ssl  # noqa: PLC0415

    try:
        tls = tls_config(settings)
    except ConfigError:
        return 1
    conn: http.client.HTTPConnection
    if tls is None:
        conn = http.client.HTTPConnection("127.0.0.1", settings.port, timeout=timeout)
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.load_cert_chain(tls.cert, tls.key)
        conn = http.client.HTTPSConnection("127.0.0.1", settings.port, timeout=timeout, context=ctx)
    try:
        conn.request("GET", path)
        status = conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return 1
    finally:
        conn.close()
    return 0 if status == 200 else 1
