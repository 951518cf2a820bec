"""The Finance exceptions page through AppTest, against the real server with the demo data."""

import pytest
from streamlit.testing.v1 import AppTest

from components.decision_form import ACCEPT, OVERRIDE, field_keys
from components.safe_text import md
from components.submission import Submitted
from dashboard.finance.models import OUTCOME_WORDS
from dashboard.store.decision import OUTCOMES, Shown
from tests.conftest import APP, forget_banks, seeded_finance_bank
from tests.helpers import QUEUE_OPEN, QUEUE_PANEL, RECALL_DETAILS_OPEN, auth_section, id_claims, open_page

PAGE = "../finance/pages/exceptions.py"


@pytest.fixture
def exceptions_page(hindsight, point_app):
    """(start, bank, outbox): start(query_params) returns an AppTest on the exceptions page, on a fresh bank holding the
    demo's finance records as the seed command signs them (a server-side copy of them: tests/conftest.py)."""
    bank = seeded_finance_bank(hindsight)
    outbox = point_app(hindsight.env(finance=bank, support=f"sup-{bank}"))

    def start(**query_params):
        return open_page(PAGE, state={**QUEUE_OPEN, **RECALL_DETAILS_OPEN}, **query_params)

    yield start, bank, outbox
    forget_banks(hindsight, bank)


def _select(at: AppTest, case_id: str) -> AppTest:
    queue = at.dataframe(key="exception_queue").value
    row = int(queue.index[queue["case"] == case_id][0])
    at.session_state["exception_queue"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    return at


def _evidence(at: AppTest, pass_: str):
    """The evidence table of one section (display-only dataframes have no key in AppTest)."""
    frames = [
        d.value for d in at.dataframe if "pass" in d.value.columns and len(d.value) and set(d.value["pass"]) == {pass_}
    ]
    assert len(frames) == 1, f"{len(frames)} {pass_} tables"
    return frames[0]


def _texts(at: AppTest) -> str:
    return "\n".join(
        e.value
        for e in [*at.subheader, *at.header, *at.text, *at.caption, *at.success, *at.warning, *at.error, *at.info]
    )


def _notices(at: AppTest) -> str:
    """The confirmations and refusals, inline beside the form (never toasts: a toast lies over the form's fields)."""
    assert not at.toast
    return "\n".join(e.value for e in [*at.success, *at.warning, *at.error])


def _submit(at: AppTest, case_id: str, **widgets) -> AppTest:
    """Fill in the form of `case_id` (its fields are keyed by the case) and submit it."""
    keys = field_keys(case_id)
    for name in ("choice", "outcome", "reason"):
        if name in widgets:
            (at.selectbox if name == "outcome" else at.radio)(key=keys[name]).set_value(widgets[name])
    if "note" in widgets:
        at.text_area(key=keys["note"]).input(widgets["note"])
    if "revise" in widgets:  # a decided case: its form revises the decision, with a reason
        at.text_input(key=field_keys(case_id, revising=True)["revise"]).input(widgets["revise"])
    at.text_input(key="reviewer_name").input(widgets.get("reviewer", "Dana Reviewer"))
    at.button(key=f"decision_submit_{case_id}").click().run()
    assert not at.exception, at.exception
    return at


def test_queue_select_a_case_see_both_sections_approve_then_override(exceptions_page, hindsight):
    start, bank, outbox = exceptions_page
    at = start()
    assert len(at.dataframe(key="exception_queue").value) == 18
    at = _select(at, "E-1002")  # Acme Fasteners price variance: two "reject" precedents
    assert at.query_params["case"] in ("E-1002", ["E-1002"])
    text = _texts(at)
    assert "Exact: this vendor AND this type (2)" in text and "Broader: this vendor OR this type (3)" in text
    exact = _evidence(at, "exact")
    assert set(exact["precedent"]) == {"PREC-V02-PRI-01", "PREC-V02-PRI-02"}
    assert exact["relevant"].all() and set(exact["pass"]) == {"exact"}
    broader = _evidence(at, "broader")
    assert not broader["relevant"].any() and set(broader["pass"]) == {"broader"}
    assert {m.label: m.value for m in at.metric}["Agent recommends"] == "Reject"
    assert "crowd" in text.lower() and "search 2's answer reused" in text

    at = _submit(at, "E-1002", choice=ACCEPT)
    assert "E-1002 recorded: reject" in _notices(at) and "saved to the agents' memory" in _notices(at)
    assert "Now E-1003: V12 Brightline Freight, duplicate invoice." in _notices(at)  # where the page moved on, said
    assert "Outcome: reject, as the agent recommended. Note: none" in _texts(at)  # what was decided, in words
    assert at.query_params["case"] in ("E-1003", ["E-1003"])  # on to the next unreviewed case
    at = _select(at, "E-1002")
    exact = _evidence(at, "exact")
    # the case never cites its own decision: it is shown apart, and its evidence is unchanged
    assert "decision-E-1002" not in set(exact["precedent"]) and "Exact: this vendor AND this type (2)" in _texts(at)
    assert "Your decision, as memory holds it" in _texts(at) and "decision-E-1002 (kept out of" in _texts(at)
    queue = at.dataframe(key="exception_queue").value.set_index("case")
    assert (queue.loc["E-1002", "status"], queue.loc["E-1002", "decision"]) == ("decided", "reject")

    at = _submit(
        at,
        "E-1002",
        choice=OVERRIDE,
        outcome="approve",
        reason="PRICE_AGREED",
        note="New price list from 1 Nov",
        revise="Rejected by mistake",
    )
    assert "E-1002 revised: approve for payment (revision 2," in _notices(at)
    decided = (
        "Outcome: approve for payment, an override of the agent's reject. Reason: PRICE_AGREED (Price change agreed with the vendor). "
        "Note: New price list from 1 Nov Revised because: Rejected by mistake"
    )
    assert decided in _texts(at)  # the confirmation names outcome, override, reason and note
    at = _select(at, "E-1002")
    assert decided in _texts(at)  # and so does the Decided box
    stored = outbox.latest("exception", "E-1002")
    assert (stored.decision.outcome, stored.decision.overridden, stored.decision.reason_code) == (
        "approve",
        True,
        "PRICE_AGREED",
    )
    assert (
        stored.decision.reviewer == "Dana Reviewer"
        and stored.decision.authenticated is False
        and stored.state == "delivered"
    )
    memories = hindsight.gateway.list_memories(
        bank, tags=["vendor:V02", "type:price_variance"], tags_match="all_strict"
    )["items"]
    mine = [m for m in memories if m["document_id"] == "decision-E-1002"]
    assert len(mine) == 1 and "Decision: approve" in mine[0]["text"]


def test_a_decision_without_reviewer_or_override_reason_is_not_submitted(exceptions_page):
    start, _bank, outbox = exceptions_page
    at = _select(start(), "E-1001")
    at = _submit(at, "E-1001", choice=ACCEPT, reviewer="")
    assert "reviewer name is required" in _notices(at)  # inline, beside the form
    at = _submit(at, "E-1001", choice=OVERRIDE, outcome="reject", reviewer="Dana")
    assert "needs a reason code" in _notices(at)
    assert outbox.history("exception") == []
    # refused: nothing recorded, and what was chosen stays, marked as the case's unsent draft
    assert at.dataframe(key="exception_queue").value.set_index("case").loc["E-1001", "status"] == "open, unsent draft"


def test_deep_link_opens_a_case_and_a_guard_case_escalates(exceptions_page):
    start, _bank, _outbox = exceptions_page
    at = start(case="E-1001")  # V01 price variance: 12 exact precedents fill k, pass 2 is skipped
    text = _texts(at)
    assert (
        "E-1001: V01 price variance" in text and text.count("Pass 2 skipped") == 1
    )  # once, in "How this was recalled"
    assert "Not searched: the exact precedents already fill the list." in text
    assert len(_evidence(at, "exact")) == 5
    queue = at.dataframe(key="exception_queue").value
    row = int(queue.index[queue["case"] == "E-1001"][0])  # the deep-linked row is the selected one
    assert at.session_state["exception_queue"]["selection"]["rows"] == [row]
    assert any("E-1001 is open: select another row to switch." in c.value for c in at.caption)
    at.button(key="check_crowd_E-1001_5").click().run()
    assert "one extra search (any_strict)" in _texts(at)

    at = start(case="E-9999")  # an unknown link: said once (escaped: the id was typed), with the way on
    assert [w.value for w in at.warning] == [md("No exception 'E-9999' in the queue (or it is filtered out).")]
    assert not [i.value for i in at.info if "empty" in i.value]
    at.button(key="exceptions_goto_first").click().run()
    assert at.query_params["case"] in ("E-1001", ["E-1001"]) and any(h.value.startswith("E-1001:") for h in at.header)


def test_guard_when_nothing_relevant(exceptions_page):
    start, _bank, _outbox = exceptions_page
    at = start(case="E-1015")  # V12 (Brightline) has no price variance precedent
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Agent recommends"], metrics["Confidence"]) == ("Escalate", "0.00")
    assert "Guard: no relevant precedent" in _texts(at) and "none concern vendor V12" in _texts(at)


# -- sign-in: a signed-in reviewer is recorded as authenticated; a required sign-in stops the page ----------
def _app(user: dict | None, provider) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = auth_section(provider)
    if user is not None:
        at.user = user
    return at


def test_signed_in_reviewer_is_recorded_as_authenticated(exceptions_page, oidc):
    _start, _bank, outbox = exceptions_page
    at = _app(id_claims(oidc, "Dana Signed", sub="u-dana", email="dana@example.com"), oidc).run()
    at.session_state[QUEUE_PANEL] = True  # open (AppTest cannot click an expander)
    at.switch_page(PAGE).run()
    at = _select(at, "E-1001")
    assert any("Signed in as Dana Signed" in t.value for t in at.sidebar.text)
    assert not [w for w in at.text_input if w.key == "reviewer_name"]  # no name to type when signed in
    at.button(key="decision_submit_E-1001").click().run()
    d = outbox.latest("exception", "E-1001").decision
    assert (d.reviewer, d.authenticated, d.reviewer_subject, d.reviewer_issuer) == (
        "Dana Signed",
        True,
        "u-dana",
        oidc.issuer,
    )


def test_a_viewer_who_posts_a_decision_by_hand_is_refused_in_words_and_nothing_is_recorded(
    exceptions_page, oidc, monkeypatch
):
    _start, _bank, outbox = exceptions_page
    monkeypatch.setenv("RECALL_REVIEW_ROLES", '{"reviewer": ["group:ap-reviewers"], "signed_in": "viewer"}')
    at = _app(id_claims(oidc, "Vic Viewer", sub="u-vic"), oidc).run()
    at.session_state[QUEUE_PANEL] = True
    at.switch_page(PAGE).run()
    at = _select(at, "E-1001")
    assert not [b for b in at.button if b.key == "decision_submit_E-1001"]  # no form for a viewer
    accept = next(b for b in at.button if b.label.startswith("Accept: "))
    assert accept.disabled
    accept.proto.disabled = False  # a press the browser would never send: Streamlit drops it, nothing runs
    accept.click().run()
    assert outbox.latest("exception", "E-1001") is None

    at.user = id_claims(oidc, "Vic Viewer", sub="u-vic", groups=["ap-reviewers"])  # drawn for a reviewer ...
    at.run()
    accept = next(b for b in at.button if b.label.startswith("Accept: "))
    assert not accept.disabled
    at.user = id_claims(oidc, "Vic Viewer", sub="u-vic")  # ... pressed once the session is a viewer's again
    accept.click().run()
    assert not at.exception
    assert any(e.value == md("Not recorded: your role (viewer) may not decide cases.") for e in at.error), [
        e.value for e in at.error
    ]
    assert outbox.latest("exception", "E-1001") is None


def test_required_login_stops_the_page_until_signed_in(exceptions_page, monkeypatch, oidc):
    monkeypatch.setenv("RECALL_REVIEW_REQUIRE_LOGIN", "true")
    at = _app({"is_logged_in": False}, oidc).run()
    assert not at.exception
    assert any("Sign in to review" in i.value for i in at.info)
    assert not at.title  # the page itself did not render
    assert at.sidebar.button(key="sign_in")


def test_required_login_without_auth_configured_says_so(exceptions_page, monkeypatch):
    monkeypatch.setenv("RECALL_REVIEW_REQUIRE_LOGIN", "true")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert any("no [auth] section is configured" in e.value for e in at.error)
    assert not at.title


def test_a_long_note_is_kept_up_to_the_limit_with_what_was_cut_shown_and_override_offers_only_other_outcomes(
    exceptions_page,
):
    start, _bank, outbox = exceptions_page
    at = _select(start(), "E-1001")
    keys = field_keys("E-1001")
    recommended = {m.label: m.value for m in at.metric}["Agent recommends"].lower()
    shown = at.selectbox(key=keys["outcome"]).options
    assert recommended not in shown and len(shown) == 2  # overriding to the recommendation is accepting it
    offered = [o for o in OUTCOMES if OUTCOME_WORDS[o] in shown]

    note = "".join(f"{i:05d} " for i in range(834))  # a 5,004-character paste
    at = _submit(at, "E-1001", choice=OVERRIDE, outcome=offered[0], reason="OTHER", note=note)
    assert outbox.latest("exception", "E-1001") is None  # refused, and said so
    assert "Not submitted: your note was 5,004 characters; the limit is 4,000" in _texts(at)
    assert at.text_area(key=keys["note"]).value == note[:4000]  # kept up to the limit
    assert [c.value for c in at.code] == [note[4000:]]  # and the rest in full, nothing lost

    at = _submit(at, "E-1001", choice=OVERRIDE, outcome=offered[0], reason="OTHER")  # the kept note, as it stands
    stored = outbox.latest("exception", "E-1001")
    assert stored is not None and stored.decision.note == note[:4000].strip() and stored.decision.outcome == offered[0]


def test_a_submit_made_on_another_case_screen_is_refused_in_words_and_nothing_is_recorded(exceptions_page):
    """A key pressed as the page moved on reaches the next case's run: its screen was another case's."""
    start, _bank, outbox = exceptions_page
    at = start(case="E-1002")
    at.text_input(key="reviewer_name").input("Dana").run()
    at.session_state["exceptions_submitted"] = Submitted(
        shown=Shown(case_id="E-1001", recommendation="approve", evidence="0" * 64), origin="key"
    )
    at.run()
    assert not at.exception, at.exception
    assert any(
        e.value.startswith(md("Not recorded: This decision was made on E-1001, but E-1002 is open now."))
        for e in at.error
    )
    assert outbox.history() == []


def test_a_signed_in_reviewer_makes_a_token_that_acts_as_them_sees_it_once_and_revokes_it(
    exceptions_page, oidc, monkeypatch, tmp_path
):
    from dashboard.access.api_tokens import ApiTokens
    from dashboard.kinds import configured, handed_in
    from dashboard.settings import load_settings

    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path / "store"))
    at = _app(
        id_claims(oidc, "Dana Signed", sub="u-dana", email="dana@example.com"), oidc
    ).run()  # Home; signed_in: reviewer
    at.text_input[0].input("dana-script")
    at.multiselect[0].select("finance")
    at.multiselect[1].select("decide")
    at.button(key="FormSubmitter:my_token_form-Make a token").click().run()
    assert not at.exception, at.exception
    (shown,) = [c.value for c in at.code]
    (token,) = ApiTokens(handed_in(configured(load_settings())).engine).all()
    assert shown.startswith("rr_") and (token.created_by, token.person_id, token.role, token.scopes) == (
        "Dana Signed",
        f"{oidc.issuer} u-dana",
        "reviewer",
        ("decide",),
    )
    at.run()
    assert not at.code  # shown once
    assert any(t.value.startswith("dana-script: decide on finance, as reviewer; never used") for t in at.text)
    at.button(key=f"revoke_token_{token.id}").click().run()
    assert ApiTokens(handed_in(configured(load_settings())).engine).check(shown) is None


def test_served_beyond_this_machine_with_the_allowance_an_anonymous_visitor_is_a_viewer(exceptions_page, monkeypatch):
    from streamlit import config

    monkeypatch.setenv("RECALL_REVIEW_ALLOW_ANONYMOUS", "true")
    monkeypatch.delenv("RECALL_REVIEW_ROLE", raising=False)
    address = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    try:
        at = AppTest.from_file(APP, default_timeout=60).run()
        at.session_state[QUEUE_PANEL] = True
        at.switch_page(PAGE).run()
        at = _select(at, "E-1001")
    finally:
        config.set_option("server.address", address)
    assert any(
        "open to anyone who reaches this address" in c.value and "**viewer**" in c.value for c in at.sidebar.caption
    )
    assert next(b for b in at.button if b.label.startswith("Accept: ")).disabled
    assert any(i.value == "Your role (viewer) can read this case but not decide it." for i in at.info)


def test_how_this_was_recalled_is_drawn_only_while_open_and_k_outlives_a_close(exceptions_page):
    """The panel's tables, traces and glossary are drawn when it is opened (a rerun), not on every key; k, inside it,
    keeps the reviewer's value whether the panel is open or not."""
    start, _bank, _outbox = exceptions_page
    at = open_page(PAGE, state=QUEUE_OPEN, case="E-1002")
    assert not [d for d in at.dataframe if "pass" in d.value.columns]  # closed: no per-pass tables
    assert "Search 1, only records tagged" not in _texts(at)
    at.number_input(key="exceptions_k").set_value(3).run()
    at.session_state["recall_details_open"] = True
    at.run()
    assert set(_evidence(at, "exact")["precedent"]) == {"PREC-V02-PRI-01", "PREC-V02-PRI-02"}
    assert "Search 1, only records tagged with all of vendor:V02 + type:price_variance (all_strict)" in _texts(at)
    assert at.number_input(key="exceptions_k").value == 3
    at.session_state["recall_details_open"] = False
    at.run()
    assert not [d for d in at.dataframe if "pass" in d.value.columns]
    assert at.number_input(key="exceptions_k").value == 3
