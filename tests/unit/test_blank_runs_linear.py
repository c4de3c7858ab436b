"""``steps.clauses`` and ``dense.windows`` cut where their regexes of before cut, without
trying each whitespace-led cut again from every blank of a run (each try read to the run's
end: the square of its length, the GIL held). The regexes of before are the oracles here;
no test asserts a time."""

from __future__ import annotations

import re
import sys
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from tool_selector.ranking import dense, steps
from tool_selector.ranking.dense import WINDOW_CHARS, windows
from tool_selector.ranking.steps import StepRule, clauses

#: ``steps.CUT`` as it was.
CUT_BEFORE = re.compile(
    rf"{steps._ABBREVIATIONS}(?<=[.!?;])\s+"
    r"|\s*\n+\s*"
    r"|\s+(?:and\s+)?then\s+"
    rf"|,\s*(?:and\s+)?(?={steps._SEQUENCE})"
    r"|(?<=[:,])\s*(?=\d{1,2}[.)]\s)|\s+(?=\d{1,2}[.)]\s+\D)",
    re.IGNORECASE,
)
#: ``dense._SENTENCE_END`` as it was.
SENTENCE_END_BEFORE = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
#: Every blank (``str.isspace``, what ``\s`` matches): tabs, \r, \v, \f, NBSP, U+2028, U+3000, ...
BLANKS = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
WORDS = ["find", "the file", "x", "Mr.", "e.g.", "finally", "next", "after that", "é", "请"]
MARKS = [".", "!", "?", ";", ":", ",", ")", "1", "2.", "12)", "3.5", "\r\n", "\n\n"]
CUES = ["and", "then", "And", "THEN", " and then ", ", then ", ", and next "]
PIECES = st.sampled_from(BLANKS + WORDS + MARKS + CUES)
#: Every clause kept, however short, so a changed cut changes the answer.
EVERY_PIECE = StepRule(min_clauses=1, min_words=1, max_clauses=1_000)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=40))
def test_the_same_clauses_as_the_regex_before(pieces: list[str]) -> None:
    text = "".join(pieces)
    with patch.object(steps, "CUT", CUT_BEFORE):
        expected = clauses(text, EVERY_PIECE)
    assert steps.CUT.split(text) == CUT_BEFORE.split(text)
    assert clauses(text, EVERY_PIECE) == expected


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=40), st.integers(1, 30))
def test_the_same_windows_as_the_regex_before(pieces: list[str], size: int) -> None:
    text = "".join(pieces)
    with patch.object(dense, "_SENTENCE_END", SENTENCE_END_BEFORE):
        expected = windows(text, 0, size)
    assert dense._SENTENCE_END.split(text) == SENTENCE_END_BEFORE.split(text)
    assert windows(text, 0, size) == expected


def test_steps_across_long_runs_of_blanks() -> None:
    """50,000 blanks before "then" and around a numbered line (seconds to minutes before)."""
    text = (
        "find the invoice of March"
        + " " * 50_000
        + "then email it to the accountant\n"
        + "\t\u3000" * 25_000
        + "2. archive the old report"
    )
    expected = ("find the invoice of March", "email it to the accountant", "archive the old report")
    assert clauses(text) == expected


def test_one_step_with_a_long_run_of_blanks_is_no_task() -> None:
    assert clauses("find " + " " * 50_000 + " the file") == ()


def test_a_line_break_inside_a_long_run_of_blanks_ends_a_sentence() -> None:
    text = "find the invoice" + " " * 50_000 + "\n" + "\u2028" * 50_000 + "email it"
    assert windows(text) == ["find the invoice email it"]


def test_a_long_run_of_blanks_without_a_break_is_cut_by_characters() -> None:
    text = "find " + " " * 50_000 + " the file"
    expected = [text[i : i + WINDOW_CHARS] for i in range(0, len(text), WINDOW_CHARS)]
    assert windows(text) == expected
