"""The Tickets and Migration pages through AppTest, against the real server with demo support data."""

import pytest
from streamlit.testing.v1 import AppTest

from components.safe_text import md
from dashboard.cli.seed import seed_bank, support_records
from dashboard.delivery.outbox import Outbox
from dashboard.support import migration
from dashboard.support.pages.evidence import DETAILS_OPEN
from dashboard.support.recall import recall_for_ticket
from tests.conftest import APP
from tests.helpers import TICKET_QUEUE_OPEN, auth_section, id_claims, open_page, record_cards
from tests.support.test_migration import CUSTOMERS


@pytest.fixture
def app_env(hindsight, bank_id, point_app):
    seed_bank(hindsight.gateway, bank_id, support_records())
    point_app(hindsight.env(support=bank_id, finance=bank_id + "-fin"))
    return bank_id


def _page(path: str) -> AppTest:
    return open_page(path, state=TICKET_QUEUE_OPEN if path == "../support/pages/tickets.py" else None)


def _verdicts(at) -> dict[str, str]:
    """Each record card's id and verdict."""
    return {ref: status for ref, status, _why in record_cards(at)}


def _texts(at) -> str:
    return "\n".join(t.value for t in at.text)


def test_tickets_page_shows_legacy_evidence_with_reasons_and_a_decision_lands_on_the_tagged_path(hindsight, app_env):
    at = _page("../support/pages/tickets.py")
    queue = at.dataframe(key="ticket_queue").value
    assert list(queue["ticket"])[:3] == ["T-2001", "T-2002", "T-2003"] and len(queue) == 12
    assert at.query_params["ticket"] in (["T-2001"], "T-2001")  # the first unreviewed ticket opens

    at.session_state["ticket_queue"] = {"selection": {"rows": [3], "columns": [], "cells": []}}  # T-2004, Ann Lee
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["ticket"] in (["T-2004"], "T-2004")
    assert any("no tagged history yet: old untagged records were searched" in w.value for w in at.warning)
    verdicts = _verdicts(at)  # every record a card of wrapped text: id, verdict, why, text in full
    assert {r for r, v in verdicts.items() if v == "used"} == {"SUP-L-001", "SUP-L-002"}
    assert {"SUP-L-003", "SUP-L-004", "SUP-L-005", "SUP-L-006"} <= {
        r for r, v in verdicts.items() if v.startswith("not used")
    }
    whys = [why for _ref, _status, why in record_cards(at)]
    assert all(whys)  # a reason on every verdict
    assert "not used: names another customer" in verdicts.values()
    assert "another customer's marker" in " ".join(whys)
    assert any(s.value.startswith("Records found but not used (") for s in at.subheader)
    assert any(e.label == "How this was recalled" for e in at.expander)
    assert "Customer tag:" not in _texts(at)  # its account is drawn only while open
    assert "I think I was charged twice again this month." in _texts(at)

    # no reviewer name: refused, nothing recorded
    submit = next(b for b in at.button if b.label == "Record decision")
    submit.click().run()
    assert [e.value for e in at.error if e.value.startswith("Not recorded")] == [
        "Not recorded: a reviewer name is required"
    ]

    at.text_input(key="ticket_reviewer").input("Rita Reviewer")
    at.radio(key="ticket_action_T-2004").set_value("edit_and_approve")
    at.text_area(key="ticket_response_T-2004").input("Hi Ann, the duplicate November charge is refunded.")
    next(b for b in at.button if b.label == "Record decision").click().run()
    assert not at.exception, at.exception
    assert at.query_params["ticket"] in (["T-2005"], "T-2005")  # on to the next unreviewed ticket
    at.button(key="tic_prev").click().run()
    assert not at.exception, at.exception
    assert any("saved to the agents' memory" in s.value for s in at.success), _texts(at)
    assert any(
        "Used this customer's tagged history" in s.value for s in at.success
    )  # cache invalidated: the new recall is tagged
    assert [r for r, v in _verdicts(at).items() if v == "used"] == ["ticket-T-2004"]
    assert "By Rita Reviewer (unauthenticated)" in _texts(at)
    row = at.dataframe(key="ticket_queue").value.set_index("ticket").loc["T-2004"]
    assert (row["status"], row["decision"]) == ("decided", "Send my edit")

    result = recall_for_ticket(hindsight.gateway.recall, app_env, "Ann Lee", "charged twice")
    assert result.path == "tagged" and result.tagged[0].text.endswith("the duplicate November charge is refunded.")


def test_deep_link_opens_a_ticket_on_the_tagged_path(hindsight, app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ticket"] = "T-2003"
    at.run()
    at.switch_page("../support/pages/tickets.py").run()
    assert not at.exception, at.exception
    assert any("Used this customer's tagged history" in s.value for s in at.success)
    used = {r for r, v in _verdicts(at).items() if v == "used"}
    assert used == {"SUP-T-005"}  # SUP-L-012 is among the legacy records left out, not used
    assert not any(s.value.startswith("Records found but not used") for s in at.subheader)


def test_how_this_was_recalled_is_drawn_while_open_and_stays_open_from_ticket_to_ticket(hindsight, app_env):
    at = open_page(
        "../support/pages/tickets.py", state={**TICKET_QUEUE_OPEN, DETAILS_OPEN: True}, ticket="T-2004"
    )  # Ann Lee: legacy
    assert "Customer tag: " in _texts(at) and "so old records were searched (the legacy fallback), proposing" in _texts(
        at
    )

    at.session_state["ticket_queue"] = {"selection": {"rows": [2], "columns": [], "cells": []}}  # T-2003: tagged
    at.run()
    assert not at.exception, at.exception
    assert "so old records were not searched (no legacy fallback)" in _texts(at)


def test_an_unknown_ticket_link_says_so_once_and_opens_the_first_unreviewed_ticket(hindsight, app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ticket"] = "T-NOPE"
    at.run()
    at.switch_page("../support/pages/tickets.py").run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == [md("No ticket 'T-NOPE' in the queue (or it is filtered out).")]
    at.button(key="ticket_goto_first").click().run()
    assert at.query_params["ticket"] in ("T-2001", ["T-2001"]) and any(
        h.value == md("T-2001: Maria Gonzalez") for h in at.header
    )


def test_migration_page_dry_run_then_apply(hindsight, app_env):
    at = _page("../support/pages/migration.py")
    records = record_cards(at)  # every untagged record read in full: status, reason, text
    statuses = [status for _ref, status, _why in records]
    assert sum(s.startswith("can be migrated, for ") for s in statuses) == 9 and statuses.count("stays untagged") == 4
    assert all(why for _ref, _status, why in records)
    assert {m.label: m.value for m in at.metric}["Can be migrated"] == "9"
    assert len(migration.legacy_documents(hindsight.gateway, app_env)) == 13  # showing the plan wrote nothing

    assert at.button(key="migration_apply").disabled  # greyed out until the list is confirmed, and it says why
    assert "Apply migration is off: tick 'I have checked the list above' first." in [c.value for c in at.caption]

    at.checkbox(key="migration_confirm").check().run()
    assert not at.button(key="migration_apply").disabled
    at.button(key="migration_apply").click().run()
    assert not at.exception, at.exception
    assert any("Tagged 9 record(s) in place" in s.value for s in at.success)
    assert any("Ready to retire the search of old records" in s.value for s in at.success)
    assert migration.plan(hindsight.gateway, app_env, CUSTOMERS).coverage.convertible == 0


# -- the decision's validation on the page, and one read of the decision log per run -------------------
def _tickets_page(user: dict | None = None, provider=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if user is not None:
        at.secrets["auth"], at.user = auth_section(provider), user
    at.run()
    at.session_state["ticket_queue_open"] = True
    at.switch_page("../support/pages/tickets.py").run()
    at.session_state["ticket_queue"] = {"selection": {"rows": [3], "columns": [], "cells": []}}  # T-2004
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def support_app(hindsight, bank_id, point_app):
    seed_bank(hindsight.gateway, bank_id, support_records())
    return point_app(hindsight.env(support=bank_id, finance=bank_id + "-fin"))


def test_a_providers_long_name_in_markup_is_recorded_cut_to_the_limit_as_plain_text(support_app, oidc):
    name = "R" * 121 + " [x](javascript:alert(1))"
    at = _tickets_page(id_claims(oidc, name, sub="u-long"), oidc)
    assert any(t.value == f"Signed in as {'R' * 120}" for t in at.sidebar.text)  # as text, never markdown
    next(b for b in at.button if b.label == "Record decision").click().run()
    assert not at.exception, at.exception
    (stored,) = support_app.history()
    assert (stored.decision.reviewer, stored.decision.reviewer_subject) == ("R" * 120, "u-long")


def test_tickets_page_reads_the_newest_decisions_in_one_query_per_run(support_app, bank_id, monkeypatch):
    at = _tickets_page()
    reads = []
    monkeypatch.setattr(Outbox, "history", lambda self, *a, **kw: reads.append(("history", *a)) or [])
    monkeypatch.setattr(Outbox, "latest", lambda self, *a: reads.append(("latest", *a)))
    monkeypatch.setattr(Outbox, "latest_per_case", lambda self, *a: reads.append(("latest_per_case", *a)) or {})
    monkeypatch.setattr(Outbox, "decision_states", lambda self, *a: reads.append(("decision_states", *a)) or {})
    at.run()
    assert not at.exception, at.exception
    assert len(at.dataframe(key="ticket_queue").value) == 12 and reads == [("decision_states", bank_id, "ticket")]


def test_a_ticket_an_agent_handed_in_shows_its_part_and_where_its_citations_differ(hindsight, app_env):
    from dashboard.kinds import configured, handed_in
    from dashboard.settings import load_settings
    from dashboard.store.agent_part import AgentPart

    ticket = {
        "id": "T-9001",
        "customer": "Ann Lee",
        "issue": "I was charged twice again.",
        "drafted_response": "Hi Ann, refunded.",
        "opened_on": "2026-12-01",
    }
    agent = AgentPart(
        name="support-bot",
        version="2.1",
        draft="Hi Ann, refunded.",
        confidence=0.6,
        rationale="Her earlier duplicate charge was refunded.",
        cited=["SUP-L-001", "SUP-L-003"],
    )
    handed_in(configured(load_settings())).submit("ticket", "T-9001", ticket, agent, "api:support-bot")
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ticket"] = "T-9001"
    at.run()
    at.switch_page("../support/pages/tickets.py").run()
    assert not at.exception, at.exception
    texts = _texts(at)
    assert "support-bot 2.1, confidence 0.60" in texts and "Its draft: Hi Ann, refunded." in texts
    assert "It cited: SUP-L-001, SUP-L-003" in texts
    differs = [line for line in texts.splitlines() if line.startswith("Differs: ")]
    assert len(differs) == 2 and differs[0].startswith(
        "Differs: The agent cited SUP-L-003, "
    )  # not admitted, with the rule's reason
    assert "another customer" in differs[0] and differs[1].startswith("Differs: The agent did not cite SUP-L-002")
