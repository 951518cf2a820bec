"""Bursts (dashboard/trust/bursts.py): many near-identical records of one origin in a short window vote once. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.cli.seed import finance_records, support_records
from dashboard.trust.bursts import MIN_BURST, WINDOW, Record, bursts, template, when
from tests.poisoning import POISONS, poison

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def items_of(entry, origin: str = "unknown", step: timedelta = timedelta(minutes=30)) -> list[Record]:
    return [Record(doc, text, origin, T0 + n * step) for n, (doc, text) in enumerate(entry.documents())]


def decision(n: int, amount: str) -> str:
    return (
        f"Vendor V02 (Acme Fasteners) price variance, decision-E-{n}, invoice INV-{n + 8000} of {amount} on "
        f"{n % 28 + 1} Nov 2026. Decision: approve. Rationale: the contracted price no longer binds this vendor."
    )


OTHER_TEMPLATE = (
    "Customer Ann Lee contacted support. Current issue: cannot download invoice {n}. Support response: "
    "allowed pop-ups for the billing domain and the download worked."
)


@pytest.mark.parametrize("kind", ["exception", "ticket"])
def test_the_repetition_attack_is_one_burst(kind):
    entry = poison("repetition", kind)
    found = bursts(items_of(entry))
    assert [b.ids for b in found] == [tuple(doc for doc, _ in entry.documents())]
    assert found[0].origin == "unknown"
    assert found[0].summary == f"{entry.copies} near-identical records from unknown origin within 2 hours"


def test_ids_numbers_dates_and_amounts_are_masked():
    assert template(decision(1777, "1,200.00")) == template(decision(1778, "1,250.00"))
    found = bursts([Record(f"d{n}", decision(n, f"{n},000.00"), "unknown", T0) for n in (1777, 1778, 1779)])
    assert [b.ids for b in found] == [("d1777", "d1778", "d1779")]
    assert found[0].summary == "3 near-identical records from unknown origin within 1 minute"


def test_the_rest_of_the_corpus_and_the_demo_make_no_burst():
    singles = [Record(doc, text, "unknown", T0) for p in POISONS if p.copies == 1 for doc, text in p.documents()]
    assert bursts(singles) == []
    demo = [Record(r.document_id, r.content, "seed", r.timestamp) for r in [*finance_records(), *support_records()]]
    assert bursts(demo) == []  # the demo's repeated rationales are weeks apart


def test_the_demo_repeats_within_a_day_would_be_one():
    """The demo's duplicate-invoice precedents differ only in their numbers: retained the same day, they are a burst."""
    demo = [
        Record(r.document_id, r.content, "seed", T0)
        for r in finance_records()
        if r.document_id.startswith("PREC-V04-DUP")
    ]
    assert [len(b.ids) for b in bursts(demo)] == [3]


def test_two_templates_do_not_make_one_burst():
    mixed = [Record(f"a{n}", decision(n, "10.00"), "unknown", T0) for n in (1, 2)] + [
        Record(f"b{n}", OTHER_TEMPLATE.format(n=n), "unknown", T0) for n in (1, 2)
    ]
    assert bursts(mixed) == []


def test_different_origins_do_not_make_one_burst():
    spread = [
        Record(f"d{n}", decision(n, "10.00"), origin, T0)
        for n, origin in enumerate(["unknown", "agent:finance", "unknown", "seed"])
    ]
    assert bursts(spread) == []
    same = [*spread, Record("d9", decision(9, "10.00"), "unknown", T0)]
    assert [b.ids for b in bursts(same)] == [("d0", "d2", "d9")]


def test_fewer_than_three_is_no_burst():
    assert MIN_BURST == 3
    entry = poison("repetition", "exception")
    assert bursts(items_of(entry)[:2]) == []


def test_copies_spread_over_more_than_a_day_are_no_burst():
    assert WINDOW == timedelta(hours=24)
    entry = poison("repetition", "exception")
    assert bursts(items_of(entry, step=timedelta(hours=12, minutes=1))) == []  # any 3 consecutive copies span > 24 h
    assert bursts(items_of(entry, step=timedelta(days=3))) == []
    assert len(bursts(items_of(entry, step=timedelta(hours=8)))) == 1  # 4 copies over 24 h exactly: one burst


def test_a_burst_found_late_in_a_spread_group():
    texts = [decision(n, "10.00") for n in range(5)]
    times = [
        T0,
        T0 + timedelta(days=3),
        T0 + timedelta(days=3, hours=1),
        T0 + timedelta(days=3, hours=2),
        T0 + timedelta(days=9),
    ]
    found = bursts(
        [Record(f"d{n}", text, "unknown", at) for n, (text, at) in enumerate(zip(texts, times, strict=True))]
    )
    assert [b.ids for b in found] == [("d1", "d2", "d3")]


def test_undated_copies_are_a_burst_with_their_times_not_known():
    entry = poison("repetition", "ticket")
    found = bursts([Record(doc, text, "unknown") for doc, text in entry.documents()])
    assert found[0].summary == f"{entry.copies} near-identical records from unknown origin (times not known)"


def test_order_is_deterministic_and_follows_the_input():
    first, second = poison("repetition", "exception"), poison("repetition", "ticket")
    items = [*items_of(first, origin="unknown"), *items_of(second, origin="agent:support")]
    items = items[::2] + items[1::2]  # interleaved: each burst's copies out of their document order
    found = bursts(items)
    assert [b.origin for b in found] == ["unknown", "agent:support"]  # by each burst's first item in the input
    assert found[0].ids == tuple(
        i.id for i in items if i.origin == "unknown"
    )  # input order, not document or time order
    assert found[1].summary.startswith("4 near-identical records from origin agent:support")
    assert bursts(items) == found


def test_times_are_read_from_iso_text_or_not_at_all():
    assert when("2026-11-20T09:00:00+00:00") == T0
    assert when("2026-11-20T09:00:00") == T0.replace(tzinfo=None)  # naive: bursts reads it as UTC
    assert when(None) is None and when("") is None and when("last Tuesday") is None


def test_records_the_bank_finds_alike_in_meaning_are_a_burst_linked_through_any_member():
    at = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    texts = [
        "Acme hex bolts over the contract price: fine.",
        "V02 billed more per bolt; let it pass.",
        "The higher unit price from Acme stands.",
        "Freight surcharge on a rush order.",
    ]
    items = [Record(f"r{n}", text, "unknown", at + timedelta(minutes=7 * n)) for n, text in enumerate(texts)]
    assert bursts(items) == []  # few words in common
    alike = {frozenset(("r0", "r2")), frozenset(("r2", "r1"))}  # r1 is alike to r2 only, not to the first
    (burst,) = bursts(items, alike)
    assert (
        burst.ids == ("r0", "r1", "r2")
        and burst.summary == "3 near-identical records from unknown origin within 14 minutes"
    )
