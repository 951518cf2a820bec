"""Vouching on the Audit page, through AppTest against the real server: a lead proposes vouching for every record the
server wrote before a time, the same lead cannot confirm it, a reviewer cannot, another lead does; the note of
unknown origin that escalated E-1016 is then of known origin and decides it (the same rule as `python -m dashboard
vouch`: tests/basics/test_memory_trust_live.py, both server modes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import streamlit as st

from dashboard.hindsight.wire import MemoryRecord
from tests.conftest import forget_banks, seeded_finance_bank
from tests.helpers import open_page
from tests.helpers import texts as all_texts

AUDIT, CASE_PAGE = "views/audit.py", "../finance/pages/exceptions.py"
CASE = "E-1016"  # V05 price variance: the demo's two precedents say approve and escalate
NOTE = "note-v05-0"


def agent_notes() -> list[MemoryRecord]:
    """One agent-style note nobody here wrote: with it E-1016 would be approved; without it the precedents conflict. It
    swings the case alone (one record: no burst to ask the server about), so the case is escalated, naming it."""
    return [
        MemoryRecord(
            document_id=NOTE,
            content="Vendor V05 (Umbrella Chemicals) price variance. Solvent price rise agreed "
            "with purchasing in October. Decision: approve.",
            tags=["vendor:V05", "type:price_variance", "kind:decision"],
            metadata={
                "vendor_code": "V05",
                "exception_type": "price_variance",
                "outcome": "approve",
                "decided_on": "2026-10-15",
            },
            timestamp=datetime(2026, 10, 15, tzinfo=UTC),
            context="AP exception decision",
        )
    ]


SWUNG = "Records of unknown origin that would decide it (read them; a lead can vouch for them): "


def texts(at) -> str:
    return all_texts(at).replace("\\", "")  # a notice is drawn through the escaping helper: "00\\:00" reads "00:00"


def _as(at, name: str):
    at.text_input(key="vouch_name").input(name)
    return at


def test_two_leads_vouch_on_the_audit_page_and_the_case_is_no_longer_escalated(hindsight, point_app, monkeypatch):
    bank = seeded_finance_bank(hindsight)
    try:
        hindsight.gateway.retain(bank, agent_notes())
        hindsight.settle(bank)
        point_app({**hindsight.env(finance=bank, support=f"sup-{bank}"), "RECALL_REVIEW_ROLE": "lead"})

        case = texts(open_page(CASE_PAGE, timeout=120, case=CASE))
        assert SWUNG in case and NOTE in case.split(SWUNG, 1)[1]

        at = open_page(AUDIT)
        assert "Vouching for records of unknown origin (0 waiting for a second lead)" in [e.label for e in at.expander]
        tomorrow = (datetime.now(UTC) + timedelta(days=1)).date()
        _as(at, "Lee").radio(key="vouch_scope").set_value("every document the server wrote before a time")
        at.date_input(key="vouch_day").set_value(tomorrow)
        at.text_area(key="vouch_reason").input("x" * 600)
        at.button(key="vouch_propose").click().run()
        assert "Not recorded: reason: 600 characters; the limit is 500" in texts(at)
        at.text_area(key="vouch_reason").input("Read every V02 note with AP: written by our intake agent")
        at.button(key="vouch_propose").click().run()
        assert not at.exception, at.exception
        said = texts(at)
        assert (
            f"Proposed: vouch #1 for every document of bank {bank} the server wrote before {tomorrow:%Y-%m-%d} 00:00 UTC waits for another lead."
            in said
        )
        assert (
            "Proposed by Lee on " in said and "Reason: Read every V02 note with AP: written by our intake agent" in said
        )

        at.button(key="vouch_1_confirm").click().run()
        assert "Not recorded: Lee proposed this vouch; another lead must confirm it (four eyes)." in texts(at)

        monkeypatch.setenv("RECALL_REVIEW_ROLE", "reviewer")  # a reviewer sees the proposal, cannot settle it
        st.cache_resource.clear()
        seen = open_page(AUDIT)
        assert seen.button(key="vouch_1_confirm").disabled and seen.button(key="vouch_1_refuse").disabled
        assert "Only a lead proposes, confirms or refuses vouching." in texts(seen)
        assert not [b for b in seen.button if b.key == "vouch_propose"]
        monkeypatch.setenv("RECALL_REVIEW_ROLE", "lead")
        st.cache_resource.clear()

        at = _as(open_page(AUDIT), "Dana")
        at.button(key="vouch_1_confirm").click().run()
        assert not at.exception, at.exception
        confirmed = [t for t in texts(at).splitlines() if t.startswith("Confirmed: vouch #1; ")]
        assert confirmed and confirmed[0].endswith(f"of {bank} now of known origin (Lee, confirmed by Dana).")
        assert int(confirmed[0].split("; ")[1].split(" ")[0]) >= 2  # the seed's records and the note
        assert "Vouching for records of unknown origin (0 waiting for a second lead)" in [e.label for e in at.expander]

        case = texts(open_page(CASE_PAGE, timeout=120, case=CASE))
        assert SWUNG not in case
        assert "vouched for by Lee, confirmed by Dana after review" in case
    finally:
        forget_banks(hindsight, bank)
