"""Numbers out of range on the command line are argparse's one-line usage error, status 2:
they were a traceback (``probe --timeout -1``, ``eval --learn --flood -5``) or a report of
nonsense (``lint --top-k 0``: "found in the top 0"; ``--wrong 5``: "500% wrong")."""

from __future__ import annotations

import pytest

from tool_selector.offline.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["lint", "--catalog", "x.json", "--top-k", "0"], "--top-k: must be 1 or more, got 0"),
        (["probe", "--timeout", "-1"], "--timeout: must be a finite number above 0, got -1"),
        (["probe", "--timeout", "nan"], "--timeout: must be a finite number above 0, got nan"),
        (["eval", "--learn", "--flood", "-5"], "--flood: must be 0 or more, got -5"),
        (["eval", "--learn", "--wrong", "5"], "--wrong: must be from 0 to 1, got 5"),
        (["eval", "--negatives", "two"], "--negatives: not a number: 'two'"),
        (["shadow-compare", "c.jsonl", "--top-k", "0"], "--top-k: must be 1 or more, got 0"),
        (["shadow-compare", "c.jsonl", "--timeout", "inf"], "finite number above 0, got inf"),
    ],
    ids=[
        "lint-top-k",
        "probe-negative",
        "probe-nan",
        "flood",
        "wrong",
        "negatives",
        "shadow-top-k",
        "shadow-timeout",
    ],
)
def test_a_number_out_of_range_is_a_usage_error(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert said in capsys.readouterr().err
