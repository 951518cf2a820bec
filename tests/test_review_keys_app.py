"""Keyboard review flow through AppTest (AppTest clicks the buttons; the browser suite presses the keys)."""

import pytest
from streamlit.testing.v1 import AppTest

from components.decision_form import OVERRIDE
from tests.helpers import open_page


@pytest.fixture
def start(hindsight, point_app, demo_banks):
    outbox = point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support))

    def _start(page: str, **query_params) -> AppTest:
        return open_page(page, timeout=120, **query_params)

    _start.outbox = outbox
    return _start


def _param(at: AppTest, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def _click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    return at


def test_exceptions_next_previous_override_and_approve_keys(start):
    at = start("views/exceptions.py", case="E-1002")
    ids = list(at.dataframe(key="exception_queue").value["case"])
    i = ids.index("E-1002")
    assert at.button(key="exc_next").proto.shortcut and at.button(key="exc_approve").proto.shortcut

    at = _click(at, "exc_next")
    assert _param(at, "case") == ids[i + 1] and at.session_state["exception_queue"]["selection"]["rows"] == [i + 1]
    assert any(h.value.startswith(ids[i + 1] + ":") for h in at.header)
    at = _click(at, "exc_prev")
    assert _param(at, "case") == "E-1002" and any(h.value.startswith("E-1002:") for h in at.header)

    at = _click(at, "exc_override")
    assert at.radio(key="decision_choice").value == OVERRIDE

    at = _click(at, "exc_approve")  # no reviewer name yet: refused, nothing recorded
    assert any("reviewer name is required" in e.value for e in at.error) and start.outbox.history() == []
    at.text_input(key="reviewer_name").input("Kay Reviewer").run()
    at = _click(at, "exc_approve")
    stored = start.outbox.latest("exception", "E-1002")
    assert stored is not None and stored.decision.overridden is False and stored.decision.reviewer == "Kay Reviewer"
    assert stored.decision.outcome == stored.decision.agent_recommendation


def test_tickets_next_previous_override_and_approve_keys(start):
    at = start("views/tickets.py", ticket="T-2004")
    assert any(h.value == "Ticket T-2004" for h in at.header)
    at = _click(at, "tic_next")
    assert _param(at, "ticket") == "T-2005" and at.session_state["ticket_queue"]["selection"]["rows"] == [4]
    at = _click(at, "tic_prev")
    assert _param(at, "ticket") == "T-2004" and any(h.value == "Ticket T-2004" for h in at.header)
    at = _click(at, "tic_override")
    assert at.radio(key="ticket_action_T-2004").value == "override"
    at.text_input(key="ticket_reviewer").input("Kay Reviewer").run()
    at = _click(at, "tic_approve")
    stored = start.outbox.latest("ticket", "T-2004")
    assert stored is not None and stored.decision.ticket_action == "approve" and stored.decision.reviewer == "Kay Reviewer"
