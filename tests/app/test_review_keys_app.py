"""Keyboard review flow through AppTest (AppTest clicks the buttons; the browser suite presses the keys)."""

import pytest
from streamlit.testing.v1 import AppTest

from components.decision_form import OVERRIDE, field_keys
from dashboard.finance import queue as exception_queue
from tests.helpers import DEMO_CASES, QUEUE_OPEN, open_page


@pytest.fixture
def start(hindsight, point_app, demo_banks):
    outbox = point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support))

    def _start(page: str, *, state: dict | None = None, **query_params) -> AppTest:
        return open_page(page, timeout=120, state=state, **query_params)

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
    at = start("../finance/pages/exceptions.py", state=QUEUE_OPEN, case="E-1002")
    assert _drawn(at) == (True, True)  # the panel open
    ids = list(at.dataframe(key="exception_queue").value["case"])
    i = ids.index("E-1002")
    assert at.button(key="exc_next").proto.shortcut and at.button(key="exc_accept").proto.shortcut

    at = _click(at, "exc_next")
    assert _param(at, "case") == ids[i + 1] and at.session_state["exception_queue"]["selection"]["rows"] == [i + 1]
    assert any(h.value.startswith(ids[i + 1] + ":") for h in at.header)
    at = _click(at, "exc_prev")
    assert _param(at, "case") == "E-1002" and any(h.value.startswith("E-1002:") for h in at.header)

    at = _click(at, "exc_override")
    assert at.radio(key=field_keys("E-1002")["choice"]).value == OVERRIDE

    at = _click(at, "exc_accept")  # no reviewer name yet: refused, nothing recorded
    assert any("reviewer name is required" in e.value for e in at.error) and start.outbox.history() == []
    at.text_input(key="reviewer_name").input("Kay Reviewer").run()
    at = _click(
        at, "exc_accept"
    )  # it records the recommendation (the button names it), not the override chosen in the form
    stored = start.outbox.latest("exception", "E-1002")
    assert stored is not None and stored.decision.overridden is False and stored.decision.reviewer == "Kay Reviewer"
    assert stored.decision.outcome == stored.decision.agent_recommendation


def test_a_key_with_nowhere_to_go_says_so_instead_of_doing_nothing(start):
    ids = [c.id for c in exception_queue.select(DEMO_CASES, {})]
    at = start("../finance/pages/exceptions.py", case=ids[0])
    assert not at.button(key="exc_prev").disabled  # enabled: a disabled button's key would vanish in the browser
    at = _click(at, "exc_prev")
    assert _param(at, "case") == ids[0]
    assert f"{ids[0]} is the first case of the queue shown: there is no previous one." in [w.value for w in at.warning]
    at = start("../finance/pages/exceptions.py", case=ids[-1])
    at = _click(at, "exc_next")
    assert _param(at, "case") == ids[-1]
    assert f"{ids[-1]} is the last case of the queue shown: there is no next one." in [w.value for w in at.warning]
    at = _click(at, "exc_prev")  # said once: the next key moves, and the words go
    assert _param(at, "case") == ids[-2] and not any("there is no" in w.value for w in at.warning)


def test_with_the_queue_panel_closed_the_keys_walk_the_queue_and_no_table_is_drawn(start):
    ids = [c.id for c in exception_queue.select(DEMO_CASES, {})]  # the queue's order, as the table would show it
    at = start("../finance/pages/exceptions.py", case=ids[0])
    assert _drawn(at) == (False, False)  # closed: neither the table nor the bulk approval is drawn
    captions = [c.value for c in at.caption]
    assert (
        f"{len(ids)} of {len(ids)} exceptions shown: 0 decided, {len(ids)} open." in captions
    )  # above the closed panel
    assert f"{ids[0]} is open: J / K move through the queue, or open it to pick one." in captions  # above the case
    for key, expected in (("exc_next", ids[1]), ("exc_next", ids[2]), ("exc_prev", ids[1]), ("exc_next_open", ids[2])):
        at = _click(at, key)
        assert _param(at, "case") == expected and any(h.value.startswith(expected + ":") for h in at.header)
    assert _drawn(at) == (False, False)


def _drawn(at: AppTest) -> tuple[bool, bool]:
    """(the queue table, the bulk approval button) on the page."""
    return "exception_queue" in [d.key for d in at.dataframe], "bulk_open" in [b.key for b in at.button]


def test_tickets_next_previous_override_and_approve_keys(start):
    at = start("../support/pages/tickets.py", ticket="T-2004")
    assert any(h.value == "T-2004: Ann Lee" for h in at.header)
    at = _click(at, "tic_next")
    assert _param(at, "ticket") == "T-2005" and at.session_state["ticket_queue"]["selection"]["rows"] == [4]
    at = _click(at, "tic_prev")
    assert _param(at, "ticket") == "T-2004" and any(h.value == "T-2004: Ann Lee" for h in at.header)
    at = _click(at, "tic_override")
    assert at.radio(key="ticket_action_T-2004").value == "override"
    at.text_input(key="ticket_reviewer").input("Kay Reviewer").run()
    at = _click(at, "tic_accept")  # sends the draft as it is, whatever the form holds
    stored = start.outbox.latest("ticket", "T-2004")
    assert stored is not None and stored.decision.action == "approve" and stored.decision.reviewer == "Kay Reviewer"
