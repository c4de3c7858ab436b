"""Filter globs cost what a name reads, not a star's ``?`` retried from every place in it,
and the filter of a request abandoned past its deadline stops at its next name.

``policy._normalized`` writes each run of ``*`` and ``?`` as its ``?`` then one ``*``: fnmatch
(the oracle here) matches the same names with either; 256 globs of a star and 120 ``?``
cost 7.8 ms a name as sent, 0.28 ms written so (measured ad hoc; no test asserts a
time)."""

from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import AbandonAfter, Abandoned
from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.checkpoints import checked
from tool_selector.ranking.controls import allowed
from tool_selector_client.policy import _normalized
from tool_selector_client.wire import Filters, Tool

GLOB_PIECES = ["*", "?", "a", "b", "-", "!", "[", "]", "[ab]", "[!a]", "[?*]", "[]a]", "\\"]
NAME_PIECES = ["a", "b", "-", "!", "[", "]", "?", "*", "\\"]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(GLOB_PIECES), max_size=12),
    st.lists(st.lists(st.sampled_from(NAME_PIECES), max_size=10), min_size=1, max_size=8),
)
def test_a_normalized_glob_matches_the_same_names(glob: list[str], names: list[list[str]]) -> None:
    sent, written = "".join(glob), _normalized("".join(glob))
    for name in ("".join(n) for n in names):
        assert bool(re.match(fnmatch.translate(written), name)) == fnmatch.fnmatchcase(name, sent)


def test_a_run_of_stars_and_marks_is_its_marks_then_one_star() -> None:
    assert _normalized("*??*?x[*?]y*") == "???*x[*?]y*"
    assert _normalized("a[b") == "a[b"
    assert _normalized("[*?") == "[?*"


def test_a_filter_stops_at_a_name_once_its_request_is_abandoned() -> None:
    catalog = build_catalog([Tool(name=f"tool_{i}", description="d") for i in range(50)])
    check = AbandonAfter(10)
    names = [(t.name, t.bare_name) for t in catalog.texts]
    with checked(check), pytest.raises(Abandoned):
        allowed(names, catalog.traits, Filters(deny=["*" + "a" * 60 + "b"]))
    assert check.asked == 11
