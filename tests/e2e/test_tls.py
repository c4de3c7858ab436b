"""mTLS with a throwaway PKI made here: only clients with a current cert from our CA get in."""

from __future__ import annotations

import datetime as dt
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trustme

from tests.e2e.rawhttp import closed_within, connect
from tests.support import ServiceProcess, free_port, start_service, wait_until
from tool_selector.offline.cli import main


@dataclass
class PKI:
    """One CA issues the server's and the proxies' certificates (as cert-manager would)."""

    ca: trustme.CA
    other_ca: trustme.CA
    dir: Path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    pki = PKI(trustme.CA(), trustme.CA(), tmp_path_factory.mktemp("pki"))
    server = pki.ca.issue_cert("127.0.0.1")
    server.cert_chain_pems[0].write_to_path(str(pki.dir / "server.pem"))
    for pem in server.cert_chain_pems[1:]:
        pem.write_to_path(str(pki.dir / "server.pem"), append=True)
    server.private_key_pem.write_to_path(str(pki.dir / "server.key"))
    pki.ca.cert_pem.write_to_path(str(pki.dir / "client-ca.pem"))
    return pki


@pytest.fixture(scope="module")
def mtls(pki: PKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    args = (
        "--tls-cert",
        str(pki.dir / "server.pem"),
        "--tls-key",
        str(pki.dir / "server.key"),
        "--tls-client-ca",
        str(pki.dir / "client-ca.pem"),
    )
    service = start_service(
        tmp_path_factory.mktemp("mtls"),
        {"TOOL_SELECTOR_ENCODER": "none"},
        args=args,
        scheme="https",
    )
    good = client_context(pki, pki.ca.issue_cert("proxy@example.com"))
    try:
        wait_until(lambda: _healthy(service, good), 60, "the TLS service")
    except TimeoutError:
        service.stop()
        raise
    yield service
    service.stop()


def client_context(pki: PKI, cert: trustme.LeafCert | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    pki.ca.configure_trust(ctx)
    if cert is not None:
        cert.configure_cert(ctx)
    return ctx


def _healthy(service: ServiceProcess, ctx: ssl.SSLContext) -> bool:
    try:
        return httpx.get(service.url + "/healthz", verify=ctx, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_client_with_a_current_cert_from_our_ca_gets_in(mtls: ServiceProcess, pki: PKI) -> None:
    ctx = client_context(pki, pki.ca.issue_cert("proxy@example.com"))
    r = httpx.post(
        mtls.url + "/v1/tool-discovery/search",
        json={"pattern": "slack", "tools": [{"name": "slack_send"}]},
        verify=ctx,
    )
    assert r.json() == {"selected_names": ["slack_send"]}


_LAST_YEAR = dt.datetime.now(dt.UTC) - dt.timedelta(days=365)


@pytest.mark.parametrize(
    "make_cert",
    [
        lambda pki: None,
        lambda pki: pki.other_ca.issue_cert("proxy@example.com"),
        lambda pki: pki.ca.issue_cert(
            "proxy@example.com",
            not_before=_LAST_YEAR,
            not_after=_LAST_YEAR + dt.timedelta(days=1),
        ),
        lambda pki: pki.ca.issue_cert(
            "proxy@example.com", not_before=dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        ),
    ],
    ids=["no-client-cert", "cert-from-another-ca", "expired-cert", "not-yet-valid-cert"],
)
def test_client_without_a_valid_cert_is_refused(
    mtls: ServiceProcess, pki: PKI, make_cert: object
) -> None:
    assert callable(make_cert)
    ctx = client_context(pki, make_cert(pki))
    with pytest.raises(httpx.TransportError):
        httpx.get(mtls.url + "/healthz", verify=ctx, timeout=5)


def test_plain_http_to_the_tls_port_gets_no_answer(mtls: ServiceProcess) -> None:
    plain = mtls.url.replace("https://", "http://")
    with pytest.raises(httpx.TransportError):
        httpx.get(plain + "/healthz", timeout=5)


def test_an_unfinished_handshake_is_cut_off(mtls: ServiceProcess) -> None:
    """granian 2.8 bounds the handshake itself (10 s, tls-listener's default, no option), not
    ``header_timeout_seconds``; a granian that drops the bound leaves the socket open past
    the 13 s this waits, and the test shows it."""
    with connect(mtls) as sock:
        sock.sendall(b"\x16\x03\x01")  # the start of a TLS record, then nothing
        assert closed_within(sock, 13)  # cut off by the server, not left open


@pytest.mark.parametrize(
    "flags",
    [
        ("--tls-client-ca", "client-ca.pem"),
        ("--tls-cert", "server.pem", "--tls-client-ca", "client-ca.pem"),
        ("--tls-key", "server.key"),
        ("--tls-cert", "server.pem", "--tls-key", "missing.key"),
    ],
    ids=["ca-only", "no-key", "key-only", "missing-file"],
)
def test_inconsistent_tls_flags_refuse_to_start(
    pki: PKI, flags: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a if a.startswith("--") else str(pki.dir / a) for a in flags]
    assert main(["serve", "--port", "1", *args]) == 2
    assert "TLS" in capsys.readouterr().err


@pytest.mark.parametrize(("path", "code"), [("/healthz", 0), ("/nope", 1)], ids=["ok", "404"])
def test_exec_probe_works_under_mtls(
    mtls: ServiceProcess, pki: PKI, monkeypatch: pytest.MonkeyPatch, path: str, code: int
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_PORT", mtls.url.rsplit(":", 1)[1])
    monkeypatch.setenv("TOOL_SELECTOR_TLS_CERT", str(pki.dir / "server.pem"))
    monkeypatch.setenv("TOOL_SELECTOR_TLS_KEY", str(pki.dir / "server.key"))
    monkeypatch.setenv("TOOL_SELECTOR_TLS_CLIENT_CA", str(pki.dir / "client-ca.pem"))
    assert main(["probe", path]) == code


def test_exec_probe_fails_when_nothing_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_PORT", str(free_port()))
    assert main(["probe", "/healthz"]) == 1
