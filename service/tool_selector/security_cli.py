"""The security flags of ``tool-selector serve`` and the checks that run before granian starts.

``--tls-cert``/``--tls-key`` serve HTTPS; ``--tls-client-ca`` adds mandatory client
certificates (mTLS). Each flag overrides its ``TOOL_SELECTOR_TLS_*`` setting. Inconsistent
combinations, missing files, and an unauthenticated non-loopback bind fail here, before
anything listens.
"""

from __future__ import annotations

import argparse
from typing import Any

from tool_selector.auth import KeyRing, check_exposure, tls_config
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
    """Settings with the flags applied, plus granian keyword arguments (TLS, header timeout).

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
    from granian.http import HTTP1Settings  # noqa: PLC0415

    options: dict[str, Any] = tls.granian_kwargs() if tls else {}
    timeout_ms = max(1, round(settings.header_timeout_seconds * 1000))
    options["http1_settings"] = HTTP1Settings(header_read_timeout=timeout_ms)
    return settings, options
