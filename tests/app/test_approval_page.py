"""The Exceptions page with decisions above their reviewer's approval limit (AppTest, the real server): the
pending view names who decided what and the amount against the limit; the proposer's controls are disabled
with why; "Needs my approval" keeps the cases for an eligible approver, whose Confirm releases one to memory
and whose Reject returns the other to the queue, naming both."""

import json

from dashboard.access.limits import ApprovalLimits
from dashboard.finance.decisions import document_id_for, exception_decision, precedent_record
from dashboard.finance.policy import Recommendation
from dashboard.review.decisions import Proposal, decision_service
from tests.helpers import QUEUE_OPEN, demo_case, open_page, select_row, texts

LIMITS = {"reviewer": 1000, "Lee": 10000}
REC = Recommendation(action="reject", confidence=1.0, cited=[], rationale="r", policy="precedent")


def test_the_pending_case_and_its_second_approval(hindsight, point_app, demo_banks):
    env = hindsight.env(finance=demo_banks.finance, support=demo_banks.support)
    outbox = point_app({**env, "RECALL_REVIEW_APPROVAL_LIMITS": json.dumps(LIMITS), "RECALL_REVIEW_ROLE": "reviewer"})
    service = decision_service(outbox, None, limits=ApprovalLimits(LIMITS))
    case, other = demo_case("E-1001"), demo_case("E-1002")  # 5,120.00 and 1,890.00: both above 1,000
    for c in (case, other):
        decision = exception_decision(c, REC, reviewer="Dana", authenticated=False, action="accept_recommendation")
        proposal = Proposal(
            decision=decision, record=precedent_record(c, decision, REC), scope="s", amount=c.invoice_amount
        )
        assert service.decide(demo_banks.finance, "reviewer", proposal).stored.state == "awaiting_approval"

    at = open_page("../finance/pages/exceptions.py", state=QUEUE_OPEN, case=case.id)
    shown = texts(at)
    assert "Awaiting second approval" in shown and "Dana decided reject on 5,120.00" in shown
    assert "Dana's limit as reviewer is 1,000.00; this invoice is 5,120.00, above it." in shown
    assert at.button(key="second_confirm").disabled  # no name yet
    assert (
        "2-way match" in shown and "No receipt in the queue file" in shown
    )  # the demo file gives no receipt: not guessed

    at.text_input(key="reviewer_name").input("Dana").run()
    assert at.button(key="second_confirm").disabled and at.button(key="second_reject").disabled
    assert "the second approver must be someone else" in texts(at)

    at.text_input(key="reviewer_name").input("Lee").run()
    at.toggle(key="exceptions_needs_me").set_value(True).run()
    assert list(at.dataframe(key="exception_queue").value["case"]) == [case.id, other.id]
    assert set(at.dataframe(key="exception_queue").value["status"]) == {"awaiting second approval"}
    assert not at.button(key="second_confirm").disabled
    assert hindsight.gateway.document(demo_banks.finance, document_id_for(case.id)) is None

    at.button(key="second_confirm").click().run()
    assert not at.exception, at.exception
    assert (
        "Dana's reject confirmed by Lee and saved to the agents' memory" in texts(at) and not at.toast
    )  # inline: a toast lies over the form
    assert hindsight.gateway.document(demo_banks.finance, document_id_for(case.id)) is not None
    assert outbox.latest("exception", case.id).state == "delivered"

    select_row(at, "exception_queue", "case", other.id)  # the one left that needs Lee
    at.button(key="second_reject").click().run()
    assert f"{other.id}: Dana's reject rejected by Lee; the case is back in the queue." in texts(at)
    at.toggle(key="exceptions_needs_me").set_value(False).run()  # it needs nobody's approval now: back in the queue
    select_row(at, "exception_queue", "case", other.id)
    assert at.dataframe(key="exception_queue").value.set_index("case").loc[other.id, "status"] == "returned"
    assert "Returned to the queue: Dana decided reject on 1,890.00" in texts(at) and "; Lee rejected it at " in texts(
        at
    )
    assert hindsight.gateway.document(demo_banks.finance, document_id_for(other.id)) is None

    audit = open_page("views/audit.py")  # the append-only trail: who proposed, who confirmed
    (steps,) = [d.value for d in audit.dataframe if "step" in d.value.columns]
    assert [(r.step, r.actor, r.case_id) for r in steps.itertuples()] == [
        ("rejected", "Lee", other.id),
        ("confirmed", "Lee", case.id),
        ("proposed", "Dana", other.id),
        ("proposed", "Dana", case.id),
    ]


def test_the_overview_shows_the_approvals_waiting_and_their_age(point_app, tmp_path):
    from dashboard.processes import free_port

    outbox = point_app(
        {"RECALL_REVIEW_DATA_DIR": str(tmp_path), "RECALL_REVIEW_API_PORT": str(free_port())}
    )  # no server needed
    service = decision_service(outbox, None, limits=ApprovalLimits(LIMITS))
    case = demo_case("E-1001")
    decision = exception_decision(case, REC, reviewer="Dana", authenticated=False, action="accept_recommendation")
    service.decide(
        "recall-review-finance",
        "reviewer",
        Proposal(
            decision=decision, record=precedent_record(case, decision, REC), scope="s", amount=case.invoice_amount
        ),
    )
    at = open_page("views/overview.py")
    (waiting,) = [d.value for d in at.dataframe if "waiting for" in d.value.columns]
    (row,) = waiting.to_dict("records")
    age = row.pop("waiting for")  # proposed moments ago: minutes, however slow the machine
    assert row == {"case": case.id, "decided by": "Dana", "outcome": "reject", "amount": 5120.0, "their limit": 1000.0}
    assert age.endswith(" min") and "1 held (1 for a second approver)." in texts(at)
    assert "Each waiting for a second approver, oldest first:" in texts(at)
