"""Reviewer agreement and Cohen's kappa on hand-computed examples (pure functions, no server)."""

from __future__ import annotations

import pytest

from dashboard.reporting.agreement import OVERALL, agreements, calibration, cohen_kappa, kappa_text


def test_kappa_and_percent_agreement_equal_the_hand_computation():
    # Dana (first) and Lee (second) on 10 cases:
    #   approve/approve 5, reject/reject 2, escalate/escalate 1, approve/reject 1, reject/approve 1
    # observed po = (5 + 2 + 1) / 10 = 0.8
    # Dana's outcomes: approve 6, reject 3, escalate 1; Lee's: approve 6, reject 3, escalate 1
    # chance pe = (6*6 + 3*3 + 1*1) / 10^2 = 46 / 100 = 0.46
    # kappa = (0.8 - 0.46) / (1 - 0.46) = 0.34 / 0.54 = 0.6296...
    table = {
        ("approve", "approve"): 5,
        ("reject", "reject"): 2,
        ("escalate", "escalate"): 1,
        ("approve", "reject"): 1,
        ("reject", "approve"): 1,
    }
    observed, kappa = cohen_kappa(table)
    assert observed == pytest.approx(0.8) and kappa == pytest.approx(0.34 / 0.54)


def test_kappa_is_undefined_when_chance_explains_everything_and_shows_as_na():
    # both always approve: po = 1, pe = (1 * 1) = 1, so kappa = 0 / 0: undefined
    assert cohen_kappa({("approve", "approve"): 4}) == (1.0, None)
    assert kappa_text(None) == "n/a" and kappa_text(0.62963) == "0.63"


def test_pairs_are_unordered_and_the_overall_row_counts_every_case():
    # Dana first / Lee second twice (agree, agree); Lee first / Dana second once (Lee approve, Dana reject);
    # Kim first / Lee second once (agree). Dana-Lee: 3 cases, 2 agree: 66.7%;
    # as (Dana, Lee): (approve, approve) 1, (reject, reject) 1, (reject, approve) 1:
    #   po = 2/3, Dana: approve 1, reject 2; Lee: approve 2, reject 1; pe = (1*2 + 2*1) / 9 = 4/9
    #   kappa = (2/3 - 4/9) / (5/9) = (2/9) / (5/9) = 0.4
    counts = [
        ("Dana", "Lee", "approve", "approve", 1),
        ("Dana", "Lee", "reject", "reject", 1),
        ("Lee", "Dana", "approve", "reject", 1),
        ("Kim", "Lee", "approve", "approve", 1),
    ]
    rows = {r.pair: r for r in agreements(counts)}
    assert set(rows) == {"Dana and Lee", "Kim and Lee", OVERALL}
    assert rows["Dana and Lee"].cases == 3 and rows["Dana and Lee"].percent == pytest.approx(200 / 3)
    assert rows["Dana and Lee"].kappa == pytest.approx(0.4)
    assert rows["Kim and Lee"].kappa is None and rows[OVERALL].cases == 4 and rows[OVERALL].percent == 75
    assert agreements([]) == []


def test_calibration_lists_every_band_in_order():
    rows = calibration({">=0.9": (4, 3), "<0.5": (2, 0)})
    assert [(r.band, r.decisions, r.kept, r.kept_percent) for r in rows] == [
        ("<0.5", 2, 0, 0.0),
        ("0.5-0.7", 0, 0, None),
        ("0.7-0.9", 0, 0, None),
        (">=0.9", 4, 3, 75.0),
    ]
