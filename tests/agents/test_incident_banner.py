"""An incident as a case's page says it: whose run it was, and whether the records the page uses are affected."""

from datetime import UTC, datetime

from dashboard.agents.incidents import Incident, banner, whose_run


def _incident(variant: str = "naive", records: tuple[str, ...] = ("SUP-L-007", "SUP-L-009")) -> Incident:
    return Incident(
        kind="other_customer",
        case_kind="ticket",
        case_id="T-2004",
        run_id="3f2a9c1b77",
        agent="support",
        variant=variant,
        bank_id="sup",
        at=datetime(2026, 12, 7, 10, 2, tzinfo=UTC),
        summary="s",
        records=list(records),
    )


def test_a_banner_names_the_run_and_says_the_page_is_not_affected_when_it_uses_none_of_the_records():
    said = banner(_incident(), {"SUP-L-001", "SUP-L-002"})
    assert not said.affected
    assert said.sentence == (
        "Incident in a run of the deliberately naive support agent, which the demo runs to show what goes wrong (run "
        "3f2a9c1b, 2026-12-07 10:02 UTC): another customer's records reached the answer. What this page shows is not affected: none "
        "of its records (SUP-L-007, SUP-L-009) is used here."
    )


def test_a_banner_says_which_of_its_records_the_page_uses():
    said = banner(_incident("reviewed"), ["SUP-L-009", "SUP-L-001"])
    assert said.affected == ["SUP-L-009"]
    assert said.sentence.startswith("Incident in a run of the support agent (run 3f2a9c1b, ")
    assert "1 of its records are used on this page too (SUP-L-009): check them before deciding." in said.sentence
    assert whose_run(_incident("submitted")).startswith(
        "a run of an outside support agent that handed this case in (run "
    )
