"""``python -m loadtests.estimate``: the shortlist's prediction against the models' own time,
run end to end on the real models (no test ran it, and a changed ``ToolVectors.rows``
signature once broke it on its first need)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from loadtests import estimate

MINI = str(Path(__file__).resolve().parents[1] / "fixtures" / "agent_mini")

pytestmark = pytest.mark.model


def test_each_rate_source_prints_its_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    estimate.main(["--datasets", MINI, "--queries", "2", "--train", "1"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| agent_mini |")]
    assert [r.split("|")[2].strip() for r in rows] == ["start", "agent_mini", "agent_mini"]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        rates = [float(r) for r in cells[2].split(" / ")]
        assert len(rates) == 2
        assert all(r > 0 for r in rates)
        taken = [float(cells[i]) for i in (4, 5, 6, 7, 9, 10, 11, 12)]  # ms and ratios
        assert all(t > 0 for t in taken)
        assert all(re.fullmatch(r"\d+%", cells[i]) for i in (8, 13))
    assert f"python -m loadtests.estimate --datasets {MINI}" in out
