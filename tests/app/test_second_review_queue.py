"""The Exceptions queue's "Needs my second review" and "Lead queue" toggles (AppTest, the real server): each keeps
the sampled cases the named reviewer may act on, and the queue's status names no outcome of a blind case; the
Audit log hides a first decision until its blind second review is given."""

from __future__ import annotations

from dashboard.finance.policy import Recommendation
from dashboard.review.decisions import decision_service
from tests.helpers import QUEUE_OPEN, demo_case, exception_proposal, open_page, texts

REC = Recommendation(action="reject", confidence=1.0, cited=[], rationale="r", policy="precedent")
BLIND, SPLIT = demo_case("E-1013"), demo_case("E-1014")  # both in the default tenth sampled for a second review


def _cases(at, toggle: str, name: str, on: bool = True) -> list[str]:
    """The queue's cases with `toggle` set, as `name` sees them."""
    at.text_input(key="reviewer_name").input(name).run()
    if at.toggle(key=toggle).value != on:  # once the queue is empty no case shows, so no name field: set it first
        at.toggle(key=toggle).set_value(on).run()
    assert not at.exception, at.exception
    queue = at.dataframe(key="exception_queue").value
    return list(queue["case"]) if "case" in queue else []


def test_the_second_review_and_lead_queues_keep_the_cases_each_reviewer_may_act_on(hindsight, point_app, demo_banks):
    env = hindsight.env(finance=demo_banks.finance, support=demo_banks.support)
    outbox = point_app({**env, "RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10"})
    service = decision_service(outbox, None, second_review_share=0.10)
    for case in (BLIND, SPLIT):
        assert service.decide(
            demo_banks.finance, "reviewer", exception_proposal(case, REC, "Dana", note=f"note-{case.id}")
        ).blind
    service.second_review(demo_banks.finance, "reviewer", exception_proposal(SPLIT, REC, "Lee", "approve"))

    at = open_page("../finance/pages/exceptions.py", state=QUEUE_OPEN)
    assert _cases(at, "exceptions_needs_second", "Lee") == [BLIND.id]  # someone else decided it first
    queue = at.dataframe(key="exception_queue").value.set_index("case")
    assert (queue.loc[BLIND.id, "status"], queue.loc[BLIND.id, "decision"]) == ("awaiting blind second review", "")
    _cases(at, "exceptions_needs_second", "Lee", on=False)
    assert _cases(at, "exceptions_lead_queue", "Max") == [SPLIT.id]
    assert at.dataframe(key="exception_queue").value.set_index("case").loc[SPLIT.id, "status"] == "awaiting lead"
    assert _cases(at, "exceptions_lead_queue", "Lee") == []  # he decided it: the lead must be neither
    # an empty queue shows no case, so no name field: the next name is typed on a fresh page
    assert (
        _cases(open_page("../finance/pages/exceptions.py", state=QUEUE_OPEN), "exceptions_needs_second", "Dana") == []
    )  # her own first decision

    audit = open_page("views/audit.py")  # what the second reviewer could read there
    table = next(d.value for d in audit.dataframe if "case_id" in d.value.columns).set_index("case_id")
    assert (table.loc[BLIND.id, "reviewer"], table.loc[BLIND.id, "note"]) == (
        "(hidden until the blind second review)",
        "",
    )
    assert "Dana" not in "\n".join(t.value for t in audit.text if BLIND.id in t.value)
    assert f"note-{BLIND.id}" not in texts(audit) + table.to_string() and f"note-{SPLIT.id}" in texts(audit)
    assert set(table.loc[SPLIT.id, "reviewer"]) == {"Dana", "Lee"}  # both reviews given: the lead reads both
