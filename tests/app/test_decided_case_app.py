"""A decided case through AppTest against the real server: the accept key and the form record nothing on it and say
so where the reviewer acted, naming the standing decision; Revise decision records the next revision with its reason,
and the case shows every revision (Finance exceptions, Support tickets)."""

from streamlit.testing.v1 import AppTest

from components.decision_form import OVERRIDE, REVISE_LABEL, field_keys
from dashboard.support.pages import case as ticket_case
from tests.helpers import open_page, texts

EXC, TIC = (
    "../finance/pages/exceptions.py",
    "../support/pages/tickets.py",
)  # one test each: E-1006 in the finance bank, T-2001 in the support bank


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _refusals(at: AppTest) -> list[str]:
    return [e.value for e in [*at.error, *at.warning]]


def _override(at: AppTest, case_id: str, outcome: str, note: str, revise: str | None = None) -> AppTest:
    keys = field_keys(case_id, revising=revise is not None)
    at.radio(key=keys["choice"]).set_value(OVERRIDE)
    at.selectbox(key=keys["outcome"]).set_value(outcome)
    at.radio(key=keys["reason"]).set_value("CONTRACT_AMENDMENT")
    at.text_area(key=keys["note"]).input(note)
    if revise is not None:
        at.text_input(key=keys["revise"]).input(revise)
    at.button(key=f"decision_submit_{case_id}").click()
    return _run(at)


def test_a_decided_exception_takes_no_stray_decision_and_revise_records_revision_two(demo_app):
    outbox = demo_app
    at = open_page(EXC, timeout=120, case="E-1006")
    at.toggle(key="auto_advance").set_value(False)
    at.text_input(key="reviewer_name").input("Dana")
    at = _override(_run(at), "E-1006", "reject", "Vendor disputes the quantity")  # the agent recommends escalate
    first = outbox.latest("exception", "E-1006")
    assert (first.revision, first.decision.outcome, first.decision.note) == (
        1,
        "reject",
        "Vendor disputes the quantity",
    )

    at.button(key="exc_accept").click()  # a stray A on the decided case
    at = _run(at)
    standing = f"E-1006 is already decided: reject by Dana, revision 1 (decision #{first.id})."
    assert any(standing in r and "Revise decision" in r for r in _refusals(at)), _refusals(at)
    # the form on a decided case is the revision's: submitted without a reason, it records nothing and says why
    assert at.button(key="decision_submit_E-1006").label == "Revise decision"
    assert any(s.value == "Revise decision" for s in at.subheader)
    at = _override(at, "E-1006", "approve", "Quantity confirmed", revise="")
    assert any(standing in r and "needs a reason" in r for r in _refusals(at)), _refusals(at)
    assert [r.revision for r in outbox.history("exception", "E-1006")] == [1]

    at = _override(at, "E-1006", "approve", "Quantity confirmed", revise="The goods receipt arrived")
    revised = outbox.latest("exception", "E-1006")
    assert (revised.revision, revised.decision.outcome, revised.decision.revision_reason) == (
        2,
        "approve",
        "The goods receipt arrived",
    )
    assert any(
        f"E-1006 revised: approve for payment (revision 2, decision #{revised.id})" in s.value for s in at.success
    )
    shown = texts(at)
    assert "Revision 2, decision #" in shown and "Revision 1, decision #" in shown  # both kept, on the case
    assert "Revised because: The goods receipt arrived" in shown and "Vendor disputes the quantity" in shown


def test_a_decided_ticket_takes_no_stray_decision_and_revise_records_revision_two(demo_app):
    outbox = demo_app
    at = open_page(TIC, timeout=120, ticket="T-2001")
    at.toggle(key="auto_advance").set_value(False)
    at.text_input(key="ticket_reviewer").input("Ada")
    at = _run(at)
    at.button(key="tic_accept").click()
    at = _run(at)
    first = outbox.latest("ticket", "T-2001")
    assert first is not None and first.revision == 1

    at.button(key="tic_accept").click()
    at = _run(at)
    assert any("T-2001 is already decided" in r and f"decision #{first.id}" in r for r in _refusals(at)), _refusals(at)
    keys = {"action": "ticket_action_T-2001", "note": "ticket_note_T-2001", "revise": "ticket_revise_T-2001"}
    at.radio(key=keys["action"]).set_value("override")
    at.text_area(key="ticket_response_T-2001").input("We will refund the second charge within five days.")
    at.text_area(key=keys["note"]).input("The draft promised the wrong refund")
    at.button(key="ticket_submit_T-2001").click()
    at = _run(at)
    assert any("needs a reason" in r for r in _refusals(at)) and len(outbox.history("ticket", "T-2001")) == 1
    at.text_input(key=keys["revise"]).input("Billing confirmed a double charge")
    at.button(key="ticket_submit_T-2001").click()
    at = _run(at)
    revised = outbox.latest("ticket", "T-2001")
    assert revised.revision == 2 and revised.decision.revision_reason == "Billing confirmed a double charge"
    assert "Revision 2, decision #" in texts(at) and "Revision 1, decision #" in texts(at)
    assert REVISE_LABEL == ticket_case.REVISE_LABEL
