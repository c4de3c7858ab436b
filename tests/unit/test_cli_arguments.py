"""Numbers out of range on the command line are argparse's one-line usage error, status 2:
they were a traceback (``probe --timeout -1``, ``eval --learn --flood -5``) or a report of
nonsense (``lint --top-k 0``: "found in the top 0"; ``--wrong 5``: "500% wrong")."""

from __future__ import annotations

import argparse

import pytest

from tool_selector.offline.cli import _parser, main


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


def _defaults_said() -> list[tuple[str, str, str | None]]:
    """``(command, option, its help as printed)`` of every option with a default to say."""
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    rows: list[tuple[str, str, str | None]] = []
    for name, command in sub.choices.items():
        formatter = command.formatter_class(command.prog)
        for action in command._actions:
            default = action.default
            if default is None or default is False or default in ([], argparse.SUPPRESS):
                continue
            shown = formatter._get_help_string(action)
            rows.append((name, "/".join(action.option_strings) or action.dest, shown))
    return rows


@pytest.mark.parametrize(
    ("command", "option", "shown"),
    [pytest.param(*row, id=" ".join(row[:2])) for row in _defaults_said()],
)
def test_every_default_is_in_the_help(command: str, option: str, shown: str | None) -> None:
    """``--help`` said no default for export-openapi --output, shadow-compare --html/--json
    /--timeout, eval --split/--output, lint --format, probe's path, distill-static --model."""
    assert "default" in (shown or ""), f"{command} {option}: {shown!r}"


def test_an_option_off_by_default_says_no_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["lint", "--help"])
    assert "(default: None)" not in capsys.readouterr().out
