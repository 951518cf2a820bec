"""The Overview's reviewer agreement (percent and Cohen's kappa per pair and overall) and the agent's calibration,
on decisions seeded through the decision service on the demo queue, with the real Hindsight's recommendations."""

from __future__ import annotations

from dashboard.finance.decisions import document_id_for
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.review.decisions import decision_service
from tests.conftest import PROVEN
from tests.helpers import demo_case, exception_proposal, open_page

PAGE = "views/overview.py"


def _table(at, column: str) -> list[dict]:
    return next(d.value for d in at.dataframe if column in d.value.columns).to_dict("records")


def _band(confidence: float) -> str:
    return "<0.5" if confidence < 0.5 else "0.5-0.7" if confidence < 0.7 else "0.7-0.9" if confidence < 0.9 else ">=0.9"


def test_agreement_and_calibration_on_the_overview_equal_a_hand_computation(hindsight, point_app, demo_banks):
    outbox = point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support))
    service = decision_service(outbox, None, second_review_share=1.0)
    recs = {}
    for case_id in ("E-1001", "E-1002", "E-1003", "E-1004"):
        case = demo_case(case_id)
        _, recs[case_id] = assess(
            two_stage_recall(
                hindsight.gateway.recall,
                demo_banks.finance,
                CaseKey.of(case),
                case.recall_query(),
                own_document=document_id_for(case.id),
            ),
            PROVEN,
        )

    def blind(case_id: str, first: tuple[str, str], second: tuple[str, str]) -> None:
        case = demo_case(case_id)
        service.decide(demo_banks.finance, "reviewer", exception_proposal(case, recs[case_id], *first))
        service.second_review(demo_banks.finance, "reviewer", exception_proposal(case, recs[case_id], *second))

    blind("E-1001", ("Dana", "approve"), ("Lee", "approve"))
    blind("E-1002", ("Dana", "approve"), ("Lee", "reject"))
    service.lead_decision(
        demo_banks.finance, "lead", exception_proposal(demo_case("E-1002"), recs["E-1002"], "Max", "escalate")
    )
    blind("E-1003", ("Lee", "reject"), ("Dana", "reject"))
    blind("E-1004", ("Kim", "approve"), ("Lee", "approve"))

    at = open_page(PAGE, timeout=240)
    # Dana and Lee, 3 cases as (Dana, Lee): (approve, approve), (approve, reject), (reject, reject): po = 2/3 = 67%;
    #   Dana approve 2 reject 1, Lee approve 1 reject 2: pe = (2*1 + 1*2) / 9 = 4/9; kappa = (6/9 - 4/9) / (5/9) = 0.40
    # Kim and Lee, 1 case, both approve: 100%, pe = 1, kappa undefined: n/a
    # all pairs as (first, second): (a, a) x2, (a, r), (r, r): po = 3/4 = 75%;
    #   first approve 3 reject 1, second approve 2 reject 2: pe = (3*2 + 1*2) / 16 = 0.5; kappa = 0.25 / 0.5 = 0.50
    assert _table(at, "Cohen's kappa") == [
        {"reviewers": "Dana and Lee", "cases": 3, "agreement": "67%", "Cohen's kappa": "0.40"},
        {"reviewers": "Kim and Lee", "cases": 1, "agreement": "100%", "Cohen's kappa": "n/a"},
        {"reviewers": "all pairs", "cases": 4, "agreement": "75%", "Cohen's kappa": "0.50"},
    ]
    # calibration: each case's standing decision (E-1002: the lead's escalate) against its recommendation's confidence
    standing = {"E-1001": "approve", "E-1002": "escalate", "E-1003": "reject", "E-1004": "approve"}
    expected: dict[str, list[int]] = {}
    for case_id, outcome in standing.items():
        counts = expected.setdefault(_band(recs[case_id].confidence), [0, 0])
        counts[0] += 1
        counts[1] += outcome == recs[case_id].action
    shown = {r["agent confidence"]: r for r in _table(at, "agent confidence")}
    assert list(shown) == ["<0.5", "0.5-0.7", "0.7-0.9", ">=0.9"]
    for band, row in shown.items():
        n, kept = expected.get(band, [0, 0])
        assert (row["decisions"], row["recommendation kept"]) == (n, f"{100 * kept / n:.0f}%" if n else ""), band
