import os
from pathlib import Path

import pytest
import trustme

from tool_selector.errors import ConfigError
from tool_selector.http import auth
from tool_selector.http.auth import (
    KeyRing,
    TLSConfig,
    check_exposure,
    is_loopback,
    parse_keys,
    tls_config,
    tokens_from_headers,
)
from tool_selector.offline.cli import main
from tool_selector.settings import Settings


@pytest.mark.parametrize(
    ("text", "separator", "keys"),
    [
        ("a,b", ",", ("a", "b")),
        (" a , ,b ,", ",", ("a", "b")),
        ("", ",", ()),
        ("a\n\n  b  \n# old key\nc # comment\n", None, ("a", "b", "c")),
        ("k3y#s3cr3t\nx\t#tab comment\n", None, ("k3y#s3cr3t", "x")),
    ],
    ids=["comma", "blanks-dropped", "empty", "file-lines-and-comments", "hash-inside-a-token"],
)
def test_parse_keys(text: str, separator: str | None, keys: tuple[str, ...]) -> None:
    assert parse_keys(text, separator) == keys


@pytest.mark.parametrize(
    ("token", "ok"),
    [("old", True), ("new", True), ("ne", False), ("new ", False), ("", False), ("x" * 500, False)],
    ids=["first-key", "second-key", "prefix", "trailing-space", "empty", "long"],
)
def test_key_ring_accepts_any_configured_key(token: str, ok: bool) -> None:
    assert KeyRing(["old", "new"]).accepts(token) is ok


def test_key_ring_without_keys_is_disabled() -> None:
    assert not KeyRing().enabled


def test_key_ring_rereads_a_changed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "FILE_CHECK_INTERVAL", 0.0)
    path = tmp_path / "keys"
    path.write_text("old\n")
    ring = KeyRing(path=path)
    path.write_text("new\nnewer\n")
    os.utime(path, ns=(1, 1))
    assert (ring.accepts("old"), ring.accepts("newer")) == (False, True)


def test_key_ring_keeps_keys_when_the_file_vanishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(auth, "FILE_CHECK_INTERVAL", 0.0)
    path = tmp_path / "keys"
    path.write_text("k\n")
    ring = KeyRing(path=path)
    path.unlink()
    assert ring.accepts("k")


@pytest.mark.parametrize("later", ["", "# all keys removed\n"], ids=["truncated", "comments-only"])
def test_key_ring_with_an_emptied_file_refuses_everyone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, later: str
) -> None:
    monkeypatch.setattr(auth, "FILE_CHECK_INTERVAL", 0.0)
    path = tmp_path / "keys"
    path.write_text("k\n")
    ring = KeyRing(path=path)
    path.write_text(later)
    assert (ring.enabled, ring.accepts("k")) == (True, False)


def test_missing_keys_file_fails_at_startup(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="API_KEYS_FILE"):
        KeyRing.from_settings(Settings(api_keys_file=str(tmp_path / "nope")))


@pytest.mark.parametrize(
    ("headers", "tokens"),
    [
        ([(b"authorization", b"Bearer abc")], (b"abc",)),
        ([(b"Authorization", b"bearer   abc ")], (b"abc",)),
        ([(b"x-api-key", b"abc")], (b"abc",)),
        ([(b"X-API-Key", b" abc ")], (b"abc",)),
        ([(b"authorization", b"Basic abc")], (b"",)),
        ([(b"authorization", b"Bearer ")], (b"",)),
        ([(b"x-api-key", b"")], (b"",)),
        ([(b"x-api-key", b"k"), (b"authorization", b"Bearer b")], (b"k", b"b")),
        ([], ()),
    ],
    ids=[
        "bearer",
        "bearer-case-spaces",
        "x-api-key",
        "x-api-key-case",
        "basic-refused",
        "bearer-empty",
        "api-key-empty",
        "both-in-order",
        "none",
    ],
)
def test_tokens_from_headers(headers: list[tuple[bytes, bytes]], tokens: tuple[bytes, ...]) -> None:
    assert tokens_from_headers(headers) == tokens


@pytest.mark.parametrize(
    ("tokens", "ok"),
    [
        ((b"k",), True),
        ((b"k", b"j"), True),
        ((b"k", b"x"), False),
        ((b"x", b"k"), False),
        ((), False),
    ],
    ids=["one", "both-good", "second-bad", "first-bad", "none"],
)
def test_every_presented_token_must_be_accepted(tokens: tuple[bytes, ...], ok: bool) -> None:
    assert KeyRing(["k", "j"]).accepts_all(tokens) is ok


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("example.internal", False),
    ],
    ids=["v4", "v4-range", "v6", "v6-brackets", "name", "any-v4", "any-v6", "private", "dns"],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A real server cert/key, its CA, another cert's key, and a file with no PEM in it."""
    tmp = tmp_path_factory.mktemp("pem")
    ca = trustme.CA()
    leaf, other = ca.issue_cert("127.0.0.1"), ca.issue_cert("other.test")
    files = {name: str(tmp / f"{name}.pem") for name in ("cert", "key", "ca", "other", "text")}
    leaf.cert_chain_pems[0].write_to_path(files["cert"])
    leaf.private_key_pem.write_to_path(files["key"])
    ca.cert_pem.write_to_path(files["ca"])
    other.private_key_pem.write_to_path(files["other"])
    Path(files["text"]).write_text("not a certificate\n")
    return files


@pytest.mark.parametrize(
    "fields",
    [("cert",), ("key",), ("ca",), ("cert", "ca"), ("key", "ca")],
    ids=["cert-only", "key-only", "ca-only", "cert-ca-no-key", "key-ca-no-cert"],
)
def test_half_configured_tls_is_refused(pem: dict[str, str], fields: tuple[str, ...]) -> None:
    names = {"cert": "tls_cert", "key": "tls_key", "ca": "tls_client_ca"}
    with pytest.raises(ConfigError, match="TLS needs both"):
        tls_config(Settings(**{names[f]: pem[f] for f in fields}))


@pytest.mark.parametrize(
    ("cert", "key", "ca", "names"),
    [
        ("text", "key", "", "TOOL_SELECTOR_TLS_CERT"),
        ("cert", "other", "", "TOOL_SELECTOR_TLS_KEY"),
        ("cert", "key", "text", "TOOL_SELECTOR_TLS_CLIENT_CA"),
        ("cert", "key", "key", "TOOL_SELECTOR_TLS_CLIENT_CA"),
    ],
    ids=["cert-not-pem", "key-of-another-cert", "client-ca-not-pem", "client-ca-is-a-key"],
)
def test_unusable_tls_files_are_refused_naming_the_key(
    pem: dict[str, str], cert: str, key: str, ca: str, names: str
) -> None:
    settings = Settings(tls_cert=pem[cert], tls_key=pem[key], tls_client_ca=pem.get(ca, ""))
    with pytest.raises(ConfigError, match=names):
        tls_config(settings)


def test_missing_tls_file_is_refused_naming_the_key(pem: dict[str, str]) -> None:
    settings = Settings(tls_cert=pem["cert"], tls_key=pem["key"], tls_client_ca="/nope.pem")
    with pytest.raises(ConfigError, match="TOOL_SELECTOR_TLS_CLIENT_CA"):
        tls_config(settings)


@pytest.mark.parametrize(
    ("with_ca", "expected"),
    [
        (False, {"ssl_cert", "ssl_key"}),
        (True, {"ssl_cert", "ssl_key", "ssl_ca", "ssl_client_verify"}),
    ],
    ids=["tls", "mtls"],
)
def test_granian_tls_arguments(pem: dict[str, str], with_ca: bool, expected: set[str]) -> None:
    settings = Settings(
        tls_cert=pem["cert"], tls_key=pem["key"], tls_client_ca=pem["ca"] if with_ca else ""
    )
    config = tls_config(settings)
    assert config is not None
    kwargs = config.granian_kwargs()
    assert set(kwargs) == expected
    assert kwargs.get("ssl_client_verify", with_ca) is with_ca


def test_no_tls_settings_means_plain_http() -> None:
    assert tls_config(Settings()) is None


_MTLS = TLSConfig(Path("c"), Path("k"), Path("ca"))


@pytest.mark.parametrize(
    ("settings", "keys", "tls"),
    [
        (Settings(host="127.0.0.1"), KeyRing(), None),
        (Settings(host="0.0.0.0"), KeyRing(["k"]), None),
        (Settings(host="0.0.0.0"), KeyRing(), _MTLS),
        (Settings(host="0.0.0.0", allow_unauthenticated=True), KeyRing(), None),
    ],
    ids=["loopback", "tokens", "mtls", "explicitly-open"],
)
def test_exposure_allowed(settings: Settings, keys: KeyRing, tls: TLSConfig | None) -> None:
    check_exposure(settings, keys, tls)


@pytest.mark.parametrize(
    "tls",
    [None, TLSConfig(Path("c"), Path("k"))],
    ids=["plain", "tls-without-client-ca"],
)
def test_open_non_loopback_bind_is_refused(tls: TLSConfig | None) -> None:
    with pytest.raises(ConfigError, match="--allow-unauthenticated"):
        check_exposure(Settings(host="0.0.0.0"), KeyRing(), tls)


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--host", "0.0.0.0"], 2),
        (["--host", "::"], 2),
    ],
    ids=["any-v4", "any-v6"],
)
def test_serve_refuses_an_open_public_bind(
    argv: list[str], code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in list(os.environ):
        if key.startswith("TOOL_SELECTOR_"):
            monkeypatch.delenv(key)
    assert main(["serve", "--port", "1", *argv]) == code
    assert "--allow-unauthenticated" in capsys.readouterr().err
