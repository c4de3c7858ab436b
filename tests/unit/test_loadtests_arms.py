"""``python -m loadtests.arms --parts`` cuts a pattern's clauses as the service cuts a
multi-step task (``ranking.steps.cut_clauses``), not by a copy of it that had drifted (it
cut after "Dr." and not before "afterwards"), nor with the leading sequence word the service
strips ("finally", "then") left on."""

from __future__ import annotations

import pytest
from loadtests import arms


@pytest.mark.parametrize(
    ("text", "fine", "expected"),
    [
        (
            "Ask Dr. Smith for the sales report of March. Then email it to the whole team",
            False,
            ["Ask Dr. Smith for the sales report of March.", "email it to the whole team"],
        ),
        (
            "Create the shipment for the order, afterwards refund the order to the customer",
            False,
            ["Create the shipment for the order", "refund the order to the customer"],
        ),
        (
            "Ask Dr. Smith for the sales report, and email it to the team",
            True,
            ["Ask Dr. Smith for the sales report", "email it to the team"],
        ),
        (
            "list open issues and then close the stale ones, finally post a summary",
            False,
            ["list open issues", "close the stale ones", "post a summary"],
        ),
        ("Book a flight to Paris then pay it", False, ["Book a flight to Paris"]),
        ("Find the files with auth middleware", True, ["Find the files with auth middleware"]),
    ],
    ids=[
        "abbreviation",
        "sequence-word",
        "fine",
        "lead-words",
        "three-words-at-least",
        "one-clause",
    ],
)
def test_arms_cuts_clauses_where_the_service_does(
    text: str, fine: bool, expected: list[str]
) -> None:
    assert arms.clauses(text, fine) == expected
