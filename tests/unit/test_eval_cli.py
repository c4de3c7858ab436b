"""``tool-selector eval`` rejects bad numbers before it loads the model."""

import pytest

from tool_selector.cli import main


@pytest.mark.parametrize(
    "args", [["--limit", "0"], ["--k", "0"], ["--k", "-3"]], ids=["limit-0", "k-0", "k-negative"]
)
def test_eval_rejects_non_positive_numbers(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", *args, "--output", "-", "--no-progress"]) == 2
    assert "must be >= 1" in capsys.readouterr().err
