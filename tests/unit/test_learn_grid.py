"""How the learned arm's constants are chosen (``offline.evaluation.learn_grid``): the best
mean R@1 among the candidates that lower no set at any wrong share, and per held-out set the
choice the others alone make."""

from __future__ import annotations

from tool_selector.offline.evaluation.learn_grid import (
    Candidate,
    candidates,
    choose,
    command,
    parser,
    row,
)
from tool_selector.ranking.fitted import SHIPPED

BOLD, SAFE = Candidate(12.0, 1.0), Candidate(12.0, 2.0)
GAINS = {
    BOLD: {
        0.1: {"arcade": (7.0, 0.0), "azure": (0.8, 0.9)},
        0.3: {"arcade": (6.1, 0.0), "azure": (-0.8, 0.9)},
    },
    SAFE: {
        0.1: {"arcade": (3.5, 0.0), "azure": (0.0, 0.0)},
        0.3: {"arcade": (6.1, 0.0), "azure": (0.0, 0.0)},
    },
}


def test_a_candidate_lowering_a_set_at_30_percent_wrong_is_not_chosen() -> None:
    assert choose(GAINS, ["arcade", "azure"]) == SAFE


def test_left_out_the_set_it_lowers_the_bolder_candidate_wins() -> None:
    assert choose(GAINS, ["arcade"]) == BOLD


def test_a_lower_r5_disqualifies_too_and_none_may_qualify() -> None:
    worse = {SAFE: {**GAINS[SAFE], 0.1: {"arcade": (3.5, -0.1), "azure": (0.0, 0.0)}}}
    assert choose(worse, ["arcade", "azure"]) is None


def test_a_row_names_the_candidate_and_every_set() -> None:
    line = row(BOLD, GAINS[BOLD])
    assert line.startswith("weight 12, support 1, lone 0.1: 10% wrong: mean R@1 +3.90")
    assert "azure -0.8/+0.9" in line


def test_every_candidate_is_the_service_rules_with_its_constants() -> None:
    grid = candidates()
    assert len(set(grid)) == len(grid)
    damped = Candidate(12.0, 1.0, 2.0)
    assert damped in grid
    assert damped.name == "weight 12, support 1, lone 2"
    rules = damped.rules()
    assert rules.hybrid.learn_weight == rules.static.learn_weight == 12.0
    assert (rules.learn.support, rules.learn.lone) == (1.0, 2.0)
    assert rules.learn.radius == SHIPPED.learn.radius


def test_no_set_left_to_choose_on_is_no_error() -> None:
    """One set alone has no leave-one-set-out fold: choosing on none still answers."""
    assert choose(GAINS, []) in GAINS


def test_a_qualifying_share_disqualifies_but_does_not_count_in_the_mean() -> None:
    """``--qualify 0.5``: a candidate lowering a set with half the calls wrong is not chosen;
    among the rest the mean at 10% and 30% decides, whatever each gains at 50%."""
    damped, bolder = Candidate(12.0, 1.0, 2.0), Candidate(12.0, 1.0, 4.0)
    gains = {
        SAFE: {**GAINS[SAFE], 0.5: {"arcade": (9.0, 0.0), "azure": (0.0, 0.0)}},
        damped: {**GAINS[SAFE], 0.1: {"arcade": (4.0, 0.0), "azure": (0.0, 0.0)}}
        | {0.5: {"arcade": (0.0, 0.0), "azure": (0.0, 0.0)}},
        bolder: {**GAINS[BOLD], 0.3: {"arcade": (6.1, 0.0), "azure": (0.0, 0.9)}}
        | {0.5: {"arcade": (2.0, 0.0), "azure": (-0.8, 0.0)}},
    }
    assert choose(gains, ["arcade", "azure"]) == damped
    assert choose(gains, ["arcade"]) == bolder  # its 50% loss is azure's alone


def test_by_default_a_rule_must_also_lower_nothing_with_half_the_calls_wrong() -> None:
    """The default run qualifies at 50% wrong (the service's rule was chosen so);
    ``--qualify`` alone measures 10% and 30% only; the printed command runs the same grid."""
    default = parser().parse_args(["--jobs", "2"])
    assert default.qualify == [0.5]
    assert command(default) == (
        "python -m tool_selector.offline.evaluation.learn_grid --limit 6000 --jobs 2 --qualify 0.5"
    )
    none = parser().parse_args(["--qualify", "--dataset", "arcade"])
    assert none.qualify == []
    assert command(none).endswith("--limit 6000 --qualify --dataset arcade")
    assert parser().parse_args(command(none).split()[3:]) == none
    other = parser().parse_args(["--qualify", "0.5", "0.3333333333333333"])
    assert parser().parse_args(command(other).split()[3:]) == other
