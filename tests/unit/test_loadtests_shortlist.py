"""``python -m loadtests.shortlist``: the sweep the shortlist's size was chosen by."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from loadtests import shortlist

MINI = str(Path(__file__).resolve().parents[1] / "fixtures" / "agent_mini")

pytestmark = pytest.mark.model


def test_the_sweep_prints_each_sizes_first_answers_beside_the_warm_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shortlist.main(["--split", "test", "--sizes", "0,10", "--datasets", MINI]) == 0
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith(f"| {MINI} (")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert re.fullmatch(r".* \([1-9]\d* q\)", cells[0])
    pairs = [tuple(map(float, c.split(" / "))) for c in cells[1:4]]  # warm, static, shortlist
    assert all(0 <= one <= 100 and 0 <= five <= 100 for one, five in pairs)
    shares = [float(c.rstrip("%")) for c in cells[4:]]
    assert shares == pytest.approx([100 * p[1] / pairs[0][1] for p in pairs[1:]], abs=0.1)
    assert re.search(r"`python -m loadtests\.shortlist --split test .*`, \d{4}-\d\d-\d\d", out)
