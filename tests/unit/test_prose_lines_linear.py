"""``prose_lines`` finds what the single regex of before found, without its two shapes
that cost the square of a message's length: its lazy group before trailing blanks (51 KB of
spaces followed by text held the process for 15 s, every request behind it), and its code
statement's ``[^.!?]*``, which scanned from every keyword line to the next sentence end (a
258 KB SQL dump without a full stop: 3 s), and its URL-only shape's blanks, which crossed
line breaks (a run of "www.a" lines read every such line after each: 120 KB, 18 s). The old
regex is the oracle here; no test asserts a time (loadtests print them)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import AbandonAfter, Abandoned
from tool_selector.ranking import request_parts
from tool_selector.ranking.checkpoints import checked
from tool_selector.ranking.request_parts import _SHAPES, _URLS, prose_lines, read_message

#: The URL-only shape as it was: its blanks crossed line breaks.
URLS_BEFORE = r"(?:https?://|www\.)\S+(?:\s+(?:https?://|www\.)\S+)*\s*$"
SHAPES_BEFORE = "|".join(URLS_BEFORE if shape is _URLS else shape for shape in _SHAPES)
#: The regex ``prose_lines`` replaced, as it was.
BEFORE = re.compile(rf"^ {{0,3}}(?!{SHAPES_BEFORE})(\S[^\n]*?)[ \t\r\f\v]*$", re.M)

PIECES = [
    "if",
    "for ",
    "from",
    "INSERT",
    "SELECT ",
    "CREATE TABLE",
    "return",
    "def",
    "x",
    "word ",
    "please find the file",
    "(",
    ")",
    ";",
    ":",
    "{",
    "=",
    ".",
    "!",
    "?",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n",
    "\r",
    "\f",
    "\v",
    "\u00a0",
    "\u2028",
    "a=b ",
    '"k": ',
    "# ",
    "> ",
    "2026-01-03 ",
    "ERROR: ",
    "http://a.b ",
    "https://c.d",
    "www.a",
    "www.b\n",
    "\x1c",
    "\u3000",
    "| c |",
    "---",
    "é",
    "请",
]


def before(text: str) -> list[tuple[str, int]]:
    return [(m.group(1), m.start(1)) for m in BEFORE.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_the_same_lines_as_the_regex_before(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert prose_lines(text) == before(text)


def test_statements_across_lines_are_still_machine_text() -> None:
    text = "SELECT name, age\nFROM users\nWHERE age > 3;\nif (x\nplease find it\nfor now, thanks\n"
    found = prose_lines(text)
    assert found == before(text)
    lines = [line for line, _ in found]
    assert "SELECT name, age" not in lines  # its ";" ends a later line, no full stop between
    assert lines == ["FROM users", "WHERE age > 3;", "if (x", "please find it", "for now, thanks"]


def test_a_long_run_of_blanks_is_read() -> None:
    """51 KB of spaces inside the request: the request is read (it took 15 s before)."""
    text = "please find the file " + " " * 50_000 + "report.pdf on the shared drive"
    found = read_message(text, 1_000, 600)
    assert found is not None
    assert "find the file" in found[0]


def test_a_dump_of_statements_without_a_full_stop_keeps_its_request() -> None:
    dump = "\n".join(
        f"INSERT INTO users (id, name, age) VALUES ({i}, 'user{i}', {20 + i % 50});"
        for i in range(4_000)
    )
    text = f"Here is the dump:\n{dump}\nCan you load these rows into the staging database?"
    found = read_message(text, 1_000, 600)
    assert found is not None
    assert "load these rows into the staging database" in found[0]


def test_a_run_of_bare_urls_keeps_its_request() -> None:
    """A run of "www.a" lines cost the square of its length (120 KB, 18 s): each line's
    URL-only shape read every such line after it."""
    text = "Which of these sites is down right now?\n" + "www.a\n" * 20_000
    found = read_message(text, 1_000, 600)
    assert found == ("Which of these sites is down right now?", "request_found")
    assert prose_lines(text) == before(text)


def test_reading_a_message_stops_once_its_request_is_abandoned() -> None:
    """A message of megabytes is read at about a second a megabyte (linear); a request
    abandoned past its deadline stops reading at its next checkpoint (``CHECK_EVERY``
    lines or sentences) instead of holding its worker to the end."""
    lines = "\n".join(f"Please find the report number {i} on the drive." for i in range(5_000))
    one_line = " ".join(f"Do item {i}." for i in range(5_000))
    for text in (lines, one_line):
        check = AbandonAfter(3)
        with checked(check), pytest.raises(Abandoned):
            read_message(text, 1_000, 600)
        assert check.asked == 4


def test_a_sentence_repeated_on_a_long_line_is_scored_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scored: list[str] = []
    score = request_parts.request_score

    def counted(sentence: str) -> int:
        scored.append(sentence)
        return score(sentence)

    monkeypatch.setattr(request_parts, "request_score", counted)
    found = read_message("Do it now. " * 10_000 + "Can you find the payroll export?", 1_000, 600)
    assert found is not None
    assert "find the payroll export" in found[0]
    assert sorted(set(scored)) == sorted(scored)
