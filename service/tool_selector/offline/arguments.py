"""Numbers a command line takes, checked by argparse: a value out of range is its one-line
usage error (status 2), not a traceback or a report of nonsense ("top 0", "500% wrong")."""

from __future__ import annotations

import argparse
import math
from typing import TypeVar

N = TypeVar("N", int, float)


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
