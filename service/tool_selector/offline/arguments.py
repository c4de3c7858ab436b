"""Numbers a command line takes, checked by argparse: a value out of range is its one-line
usage error (status 2), not a traceback or a report of nonsense ("top 0", "500% wrong");
and the help formatter that states every option's default."""

from __future__ import annotations

import argparse
import math
from typing import TypeVar

N = TypeVar("N", int, float)


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's ``(default: ...)`` on every option that has a default worth saying (not
    ``None``, ``False`` or empty: those mean "off" or "see the help"), unless its help
    already says its default."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if "default" in text or default is None or default is False or default == []:
            return action.help
        return super()._get_help_string(action)


def positive_int(text: str) -> int:
    """An integer of 1 or more."""
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text}")
    return value


def count(text: str) -> int:
    """An integer of 0 or more."""
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds above 0."""
    value = _number(text, float)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def share(text: str) -> float:
    """A share from 0 to 1."""
    value = _number(text, float)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def _number(text: str, kind: type[N]) -> N:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
