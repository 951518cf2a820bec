"""Nothing typed on a ticket is lost, through AppTest against the real server: a decision chosen and typed on a ticket
but not sent is kept as that ticket's draft for the session (J away and K back: all of it there), marked on the ticket
and in the tickets queue, never shown on another ticket nor on the finance page; recorded, the draft is gone."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import TICKET_QUEUE_OPEN, open_page, texts

EDIT = "Hi Ann, the second November charge is being refunded; half-written"
NOTE = "Checked the card statement: two charges on"


@pytest.fixture
def outbox(hindsight, point_app, demo_banks):
    return point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support))


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _fields(at: AppTest, ticket: str) -> tuple:
    return (
        at.radio(key=f"ticket_action_{ticket}").value,
        at.text_area(key=f"ticket_response_{ticket}").value,
        at.text_area(key=f"ticket_note_{ticket}").value,
    )


def _badged(at: AppTest) -> bool:
    """The open ticket's header carries the "unsent draft" badge (a badge is markdown to AppTest)."""
    return any("-badge[" in m.value and "unsent draft]" in m.value for m in at.markdown)


def _status(at: AppTest, ticket: str) -> str:
    queue = at.dataframe(key="ticket_queue").value
    return queue.loc[queue["ticket"] == ticket, "status"].iloc[0]


def test_an_unsent_ticket_decision_is_kept_per_ticket_and_never_shown_on_another(outbox):
    at = open_page("../support/pages/tickets.py", timeout=120, state=TICKET_QUEUE_OPEN, ticket="T-2004")
    drafted_response = at.text_area(key="ticket_response_T-2004").value
    assert "Unsent draft" not in texts(at) and not _badged(at)
    at.radio(key="ticket_action_T-2004").set_value("edit_and_approve")
    at = _run(at)
    at.text_area(key="ticket_response_T-2004").input(EDIT)
    at = _run(at)
    at.text_area(key="ticket_note_T-2004").input(NOTE)
    at = _run(at)
    drafted = ("edit_and_approve", EDIT, NOTE)
    assert _fields(at, "T-2004") == drafted
    assert "Unsent draft on T-2004" in texts(at) and "Unsent drafts, kept for this session: T-2004." in texts(at)
    assert _badged(at)  # on the ticket's header
    assert _status(at, "T-2004").endswith(", unsent draft")  # and in the queue

    at.button(key="tic_next").click()
    at = _run(at)
    assert at.query_params["ticket"] in ("T-2005", ["T-2005"])
    fresh = _fields(at, "T-2005")
    assert fresh[0] == "approve" and fresh[1] != EDIT and fresh[2] == ""  # nothing of T-2004's draft on another ticket
    assert "Unsent draft on T-2005" not in texts(at) and "Unsent draft on T-2004" not in texts(at)
    assert not _badged(at)
    assert "Unsent drafts, kept for this session: T-2004." in texts(at)
    assert _status(at, "T-2004").endswith(", unsent draft") and not _status(at, "T-2005").endswith("unsent draft")

    at.switch_page(
        "../finance/pages/exceptions.py"
    )  # the finance page keeps its own drafts: a ticket's is not one of them
    at = _run(at)
    assert "Unsent drafts" not in texts(at) and "T-2004" not in texts(at)

    at.switch_page("../support/pages/tickets.py")
    at.query_params["ticket"] = "T-2004"
    at = _run(at)
    assert _fields(at, "T-2004") == drafted  # all of it back
    assert "Unsent draft on T-2004" in texts(at)

    at.radio(key="ticket_action_T-2004").set_value("approve")  # put back as it started: no draft any more
    at.text_area(key="ticket_response_T-2004").input(drafted_response)
    at.text_area(key="ticket_note_T-2004").input("")
    at = _run(at)
    assert "Unsent draft" not in texts(at) and not _status(at, "T-2004").endswith("unsent draft")

    at.radio(key="ticket_action_T-2004").set_value("edit_and_approve")
    at.text_area(key="ticket_response_T-2004").input(EDIT)
    at = _run(at)
    assert "Unsent draft on T-2004" in texts(at)
    at.text_input(key="ticket_reviewer").input("Rita Lead")
    at.button(key="ticket_submit_T-2004").click()
    at = _run(at)
    stored = outbox.latest("ticket", "T-2004")
    assert (
        stored is not None
        and stored.decision.action == "edit_and_approve"
        and stored.decision.details["response"] == EDIT
    )
    assert "Unsent draft" not in texts(at)  # recorded: no draft any more
