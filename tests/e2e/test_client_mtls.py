"""The client presents a client certificate (mTLS) and checks the server's against a CA."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from tests.misbehaving import MisbehavingServer
from tool_selector_client import SelectorClient

TOOLS = [{"name": "read_file", "description": "Read a file"}]


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def mtls_server(ca: trustme.CA) -> Iterator[MisbehavingServer]:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(ctx)
    ca.configure_trust(ctx)
    ctx.verify_mode = ssl.CERT_REQUIRED
    server = MisbehavingServer(tls=ctx)
    yield server
    server.close()


@pytest.fixture(scope="module")
def files(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("pki")
    client = ca.issue_cert("proxy@example.test")
    ca.cert_pem.write_to_path(str(d / "ca.pem"))
    client.private_key_and_cert_chain_pem.write_to_path(str(d / "client.pem"))
    return {"ca": str(d / "ca.pem"), "client": str(d / "client.pem")}


def _select(url: str, **options: Any) -> tuple[str | None, tuple[str, ...]]:
    with SelectorClient(url, timeout_s=5, **options) as client:
        selection = client.select("read", TOOLS)
    return selection.reason, selection.names


def test_client_certificate_is_accepted(
    mtls_server: MisbehavingServer, files: dict[str, str]
) -> None:
    assert _select(mtls_server.url, verify=files["ca"], cert=files["client"]) == (
        None,
        ("read_file",),
    )


@pytest.mark.parametrize(
    "options",
    [{"verify": "ca"}, {"cert": "client"}],
    ids=["no_client_cert", "unknown_server_ca"],
)
def test_tls_failures_fail_open(
    mtls_server: MisbehavingServer, files: dict[str, str], options: dict[str, str]
) -> None:
    resolved = {k: files[v] for k, v in options.items()}
    assert _select(mtls_server.url, **resolved) == ("connect_error", ())


def test_bad_certificate_path_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SelectorClient("https://127.0.0.1:1", cert=str(tmp_path / "missing.pem"))
