"""Long patterns: cut to a budget (head and tail, whole words); embedded in windows."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tool_selector.pipeline.decoding import cut_pattern
from tool_selector.ranking.dense import WINDOW_CHARS, windows


@pytest.mark.parametrize(
    ("pattern", "budget", "expected"),
    [
        ("send a slack message", 100, "send a slack message"),
        ("alpha beta gamma delta epsilon zeta", 20, "alpha beta zeta"),
        ("x" * 50, 20, "x" * 10 + " " + "x" * 10),
        ("open the door " + "x" * 40 + " then post it to slack", 24, "open the it to slack"),
    ],
    ids=["fits", "words", "blob", "head-and-tail"],
)
def test_cut(pattern: str, budget: int, expected: str) -> None:
    assert cut_pattern(pattern, budget) == expected


@given(st.text(min_size=1, max_size=300).filter(str.strip), st.integers(1, 120))
def test_a_cut_pattern_fits_its_budget_and_keeps_its_start(pattern: str, budget: int) -> None:
    cut = cut_pattern(pattern, budget)
    assert len(cut) <= budget + 1
    assert cut == pattern or pattern.strip().startswith(cut.split()[0])


@given(st.text(min_size=1, max_size=300).filter(str.strip), st.integers(1, 120))
def test_a_pattern_with_words_never_becomes_blank(pattern: str, budget: int) -> None:
    assert cut_pattern(pattern, budget).strip()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("short request", ["short request"]),
        ("a" * 1000, ["a" * 1000]),
        ("One. Two!\nThree? " + "x" * 990, ["One. Two! Three?", "x" * 400, "x" * 400, "x" * 190]),
    ],
    ids=["short", "whole", "sentences-then-blob"],
)
def test_windows(text: str, expected: list[str]) -> None:
    assert windows(text) == expected


@given(st.text(min_size=1001, max_size=3000).filter(str.strip))
def test_windows_fit_and_keep_every_word(text: str) -> None:
    parts = windows(text)
    assert all(len(p) <= WINDOW_CHARS for p in parts)
    assert "".join("".join(parts).split()) == "".join(text.split())
