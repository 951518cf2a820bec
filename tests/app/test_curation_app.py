"""Four-eyes curation on the Finance exceptions page's evidence cards, through AppTest against the real server."""

import uuid

import streamlit as st

from dashboard.agents.runner import run_exception
from dashboard.cli.seed import finance_records, seed_bank, support_records
from dashboard.hindsight.errors import HindsightRequestRejected
from dashboard.processes import free_port
from dashboard.review.curation import Curation
from dashboard.store.agent_runs import AgentRunStore
from dashboard.store.db import make_engine
from tests.helpers import RECALL_DETAILS_OPEN, demo_case, open_page, texts

PAGE = "../finance/pages/exceptions.py"
DOC = "PREC-V02-PRI-01"  # an exact precedent of E-1002 (Acme Fasteners, price variance)


def _exact(at) -> set[str]:
    frames = [
        d.value
        for d in at.dataframe
        if "pass" in d.value.columns and len(d.value) and set(d.value["pass"]) == {"exact"}
    ]
    return set(frames[0]["precedent"]) if frames else set()


def _as(at, name: str):
    at.text_input(key="reviewer_name").input(name)
    return at


def test_a_reviewer_proposes_on_a_card_the_proposer_cannot_approve_a_lead_does(hindsight, point_app):
    bank = f"fin-{uuid.uuid4().hex[:8]}"
    seed_bank(hindsight.gateway, bank, finance_records())
    hindsight.gateway.enable_audit_log(bank)
    outbox = point_app(hindsight.env(finance=bank, support=f"sup-{bank}"))
    run_exception(hindsight.gateway, AgentRunStore(outbox.engine), bank, demo_case("E-1002"), "reviewed")  # "then"
    key = f"curate_{DOC}"
    # its exact table is in "How this was recalled"; its card's proposal form is drawn only while its popover is open
    at = open_page(PAGE, state={**RECALL_DETAILS_OPEN, f"{key}_open": True}, case="E-1002")
    assert DOC in _exact(at)
    assert [a.key for a in at.text_area if (a.key or "").startswith("curate_")] == [
        f"{key}_reason"
    ]  # no other card's form

    _as(at, "Dana").selectbox(key=f"{key}_label").set_value("outdated")
    at.text_area(key=f"{key}_reason").input("x" * 600)
    at.button(key=f"{key}_propose").click().run()
    assert "Not recorded: reason: 600 characters; the limit is 500" in texts(at)
    assert at.text_area(key=f"{key}_reason").value == "x" * 600  # nothing lost: the reviewer shortens it

    at.text_area(key=f"{key}_reason").input("supplier contract ended")
    at.button(key=f"{key}_propose").click().run()
    assert not at.exception, at.exception
    assert f"Proposed: {DOC} waits for a lead" in texts(at).replace("\\", "")
    assert "Proposed by Dana on " in texts(at) and "Reason: supplier contract ended" in texts(at)

    at.button(key=f"{key}_approve").click().run()
    assert "Dana proposed this; another lead must approve it (four eyes)." in texts(at)
    assert hindsight.gateway.list_memories(bank, document_id=DOC)["total"] == 1

    _as(at, "Lee").button(key=f"{key}_approve").click().run()
    assert not at.exception, at.exception
    assert f"Approved: {DOC} is invalidated." in texts(at).replace("\\", "")
    assert DOC not in _exact(at)  # the case recalled again: the retired precedent is gone
    approved_on = Curation(outbox.engine).history()[0].created_at.date().isoformat()
    # then vs now: the precedent left the agent's evidence, and its cause says who retired it and why
    assert (
        f"{DOC} left: invalidated. Invalidated by Lee on {approved_on}: supplier contract ended (outdated, proposed by Dana)."
        in texts(at)
    )
    assert hindsight.gateway.list_memories(bank, document_id=DOC)["total"] == 0


def test_a_tickets_record_is_proposed_and_approved_from_the_ticket_page(hindsight, bank_id, point_app):
    seed_bank(hindsight.gateway, bank_id, support_records())
    point_app(hindsight.env(support=bank_id, finance=bank_id + "-fin"))
    key = "curate_SUP-T-005"
    at = open_page(
        "../support/pages/tickets.py", state={f"{key}_open": True}, ticket="T-2003"
    )  # the tagged path: SUP-T-005 reaches the ticket
    assert at.selectbox(key="curate_record_T-2003").value == "SUP-T-005"
    at.text_input(key="ticket_reviewer").input("Dana")
    at.selectbox(key=f"{key}_label").set_value("another_customer")
    at.text_area(key=f"{key}_reason").input("it is Ann Leeds's call")
    at.button(key=f"{key}_propose").click().run()
    at.text_input(key="ticket_reviewer").input("Lee")
    at.button(key=f"{key}_approve").click().run()
    assert not at.exception, at.exception
    assert "Approved: SUP-T-005 is invalidated." in texts(at).replace("\\", "") and not at.toast
    assert hindsight.gateway.list_memories(bank_id, document_id="SUP-T-005")["total"] == 0


def test_the_overview_counts_proposals_approvals_and_reverts_from_the_store(monkeypatch, tmp_path):
    curation = Curation(make_engine(None, tmp_path))  # the store the page opens in its data directory
    first = curation.propose("b", "d1", role="reviewer", proposer="Dana", label="wrong", reason="misfiled")
    curation.approve(first.id, role="lead", lead="Lee")
    back = curation.propose("b", "d1", role="reviewer", proposer="Kim", change="revert", reason="it was right")
    curation.approve(back.id, role="lead", lead="Lee")
    other = curation.propose("b", "d2", role="reviewer", proposer="Dana", label="duplicate", reason="same as d1")
    curation.reject(other.id, role="lead", lead="Lee")
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(
        "RECALL_REVIEW_API_PORT", str(free_port())
    )  # nothing listens there: the figures need no Hindsight
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = open_page("views/overview.py")
    assert {m.label: m.value for m in at.metric}["Curation proposed / approved / reverted"] == "3 / 2 / 1"


def test_the_audit_log_lists_curation_and_a_lead_discards_a_refused_approval(point_app, tmp_path):
    outbox = point_app({"RECALL_REVIEW_DATA_DIR": str(tmp_path), "RECALL_REVIEW_API_PORT": str(free_port())})
    curation = Curation(outbox.engine)
    proposal = curation.propose(
        "b", "doc-1", role="reviewer", proposer="Dana", label="duplicate", reason="same as doc-0"
    )
    approval, _ = curation.approve(proposal.id, role="lead", lead="Lee")

    def refusing(*_args):
        raise HindsightRequestRejected("Hindsight refused the request: no such bank")

    assert curation.deliver_due(refusing).failed == 1
    at = open_page("views/audit.py")
    [log] = [
        d.value for d in at.dataframe if "event #" in d.value.columns
    ]  # display-only tables have no key in AppTest
    assert list(zip(log["actor"], log["action"], log["after"], log["delivery"], strict=True)) == [
        ("Lee", "approve", "invalidated", "failed"),
        ("Dana", "propose", "invalidation proposed", ""),
    ]
    assert "no such bank" in log["last error"][0]
    at.button(key="curation_discard").click().run()
    assert not at.exception, at.exception
    assert curation.get(approval.id).state == "discarded"
