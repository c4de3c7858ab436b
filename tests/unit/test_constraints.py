"""``make install`` installs every package at the version ``constraints.txt`` pins, so a new
release of a dependency cannot change a fresh clone (msgspec 0.23 did, 2026-12-06)."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import ROOT

PINS = {
    canonicalize_name(Requirement(line).name): Requirement(line)
    for line in (ROOT / "constraints.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
}
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_every_pin_is_one_exact_version() -> None:
    for name, pin in PINS.items():
        specs = list(pin.specifier)
        assert [s.operator for s in specs] == ["=="], name
        assert "+" not in specs[0].version, f"{name}: a local label would refuse other builds"


def test_every_dependency_and_extra_of_the_project_is_pinned_within_its_range() -> None:
    declared = [*PROJECT["dependencies"]]
    declared += [r for extra in PROJECT["optional-dependencies"].values() for r in extra]
    for line in declared:
        wanted = Requirement(line)
        pin = PINS.get(canonicalize_name(wanted.name))
        assert pin is not None, f"{wanted.name} has no pin in constraints.txt"
        version = next(iter(pin.specifier)).version
        assert wanted.specifier.contains(version, prereleases=True), (line, version)


def test_make_install_reads_the_pins_and_torch_is_the_pinned_one() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "install -c constraints.txt -e '.[dev,offline]'" in makefile
    assert "$(STAMP): pyproject.toml constraints.txt" in makefile
    assert (
        f"install torch=={next(iter(PINS[canonicalize_name('torch')].specifier)).version}"
        in makefile
    )
