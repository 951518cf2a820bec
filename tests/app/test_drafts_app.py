"""Nothing typed is lost, through AppTest against the real server: an override chosen and typed on a case but not sent
is kept as that case's draft for the session (J away and K back: all of it there), marked on the case and beside the
queue, and never shown on another case; recorded, the draft is gone."""

from streamlit.testing.v1 import AppTest

from components.decision_form import OVERRIDE, field_keys
from tests.helpers import open_page, texts


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _fields(at: AppTest, case_id: str) -> tuple:
    keys = field_keys(case_id)
    return (
        at.radio(key=keys["choice"]).value,
        at.selectbox(key=keys["outcome"]).value,
        at.radio(key=keys["reason"]).value,
        at.text_area(key=keys["note"]).value,
    )


def test_an_unsent_override_is_kept_per_case_and_never_shown_on_another(demo_app):
    outbox = demo_app
    at = open_page("../finance/pages/exceptions.py", timeout=120, case="E-1003")
    assert at.query_params["case"] in ("E-1003", ["E-1003"])
    keys = field_keys("E-1003")
    at.radio(key=keys["choice"]).set_value(OVERRIDE)
    at = _run(at)
    outcome = (
        "reject" if "reject" in at.selectbox(key=keys["outcome"]).options else "approve"
    )  # not the recommended one
    at.selectbox(key=keys["outcome"]).set_value(outcome)
    at = _run(at)
    at.radio(key=keys["reason"]).set_value("CONTRACT_AMENDMENT")
    at = _run(at)
    at.text_area(key=keys["note"]).input("Half-written: PO 1003 amended on")
    at = _run(at)
    drafted = (OVERRIDE, outcome, "CONTRACT_AMENDMENT", "Half-written: PO 1003 amended on")
    assert _fields(at, "E-1003") == drafted
    assert "Unsent draft on E-1003" in texts(at) and "Unsent drafts, kept for this session: E-1003." in texts(at)

    at.button(key="exc_next").click()
    at = _run(at)
    assert at.query_params["case"] in ("E-1004", ["E-1004"])
    assert _fields(at, "E-1004") == ("accept", None, None, "")  # nothing of E-1003's draft on another case
    assert "Unsent draft on E-1004" not in texts(at) and "Unsent drafts, kept for this session: E-1003." in texts(at)
    assert not any("unsent draft]" in m.value for m in at.markdown)  # no badge (markdown to AppTest) on its header

    at.button(key="exc_prev").click()
    at = _run(at)
    assert _fields(at, "E-1003") == drafted  # all of it back
    assert "Unsent draft on E-1003" in texts(at)

    at.text_input(key="reviewer_name").input("Dana")
    at.button(key="decision_submit_E-1003").click()
    at = _run(at)
    stored = outbox.latest("exception", "E-1003")
    assert (
        stored is not None and stored.decision.note == "Half-written: PO 1003 amended on" and stored.decision.overridden
    )
    assert "Unsent draft" not in texts(at)  # recorded: no draft any more
