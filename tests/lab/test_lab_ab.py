"""A/B on the same queue against the real server: B = a clone of the banks with the graph arm off."""

from __future__ import annotations

import time
import uuid

import pytest

from dashboard import demo_data
from dashboard.cli.seed import finance_records, support_records
from dashboard.finance.models import ExceptionCase
from dashboard.lab.ab import Comparison, Variant, compare
from dashboard.queue_files import load_rows
from dashboard.support.models import Ticket
from tests.helpers import bank_ids


@pytest.fixture(scope="module")
def demo_banks(hindsight):
    finance, support = f"ab-src-fin-{uuid.uuid4().hex[:6]}", f"ab-src-sup-{uuid.uuid4().hex[:6]}"
    for bank, records in ((finance, finance_records()), (support, support_records())):
        hindsight.gateway.ensure_bank(bank)
        hindsight.gateway.retain(bank, records)
    # The graph arm walks links the server builds after retain: wait until they are there and settled.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        stats = hindsight.gateway.bank_stats(finance)
        if stats.get("total_links") and not stats.get("pending_operations"):
            break
        time.sleep(1)
    return finance, support


def test_graph_off_on_a_clone_shows_which_cases_change_and_the_clone_is_gone(hindsight, demo_banks):
    finance, support = demo_banks
    cases, tickets = load_rows(demo_data.EXCEPTIONS, ExceptionCase), load_rows(demo_data.TICKETS, Ticket)
    a = Variant(name="a")
    b = Variant(name="no-graph", kind="bank_config", bank_config={"enable_graph_retrieval": False})
    report = compare(hindsight.gateway, finance, support, cases, tickets, a, b)
    assert len(report.diffs) == len(cases) + len(tickets)
    assert not [d.error for d in report.diffs if d.error], [d.error for d in report.diffs if d.error]
    # Both clones were made, used and deleted.
    assert (
        sorted(report.clones_deleted)
        == sorted([c for c in report.clones_deleted if c.startswith("ab-no-graph-") and (finance in c or support in c)])
        and len(report.clones_deleted) == 2
    )
    assert not [bank for bank in bank_ids(hindsight.gateway) if bank.startswith("ab-no-graph-")]
    # Which cases change depends on how the graph arm ranks this bank; whatever it is, the report adds up.
    changed = [d for d in report.diffs if d.changed]
    assert all(d.kind == "exception" for d in changed if d.gained or d.lost)  # tickets have no exact precedents
    assert report.exact_lost == sum(len(d.lost) for d in changed)
    summary = report.summary()
    assert summary.startswith("under B (clone with enable_graph_retrieval=False): ")
    assert f"{report.recommendations_changed} recommendation(s) change" in summary and "p50" in summary
    # A against itself: nothing changes (the comparison is deterministic on the same banks).
    same = compare(hindsight.gateway, finance, support, cases[:3], tickets[:3], a, Variant(name="a2"))
    assert not [d.error for d in same.diffs if d.error]
    assert [d.row() for d in same.diffs if d.changed] == [] and same.clones_deleted == []


def test_a_starved_candidate_budget_on_a_clone_loses_exact_precedents(hindsight, demo_banks):
    """B that must change cases: two candidates per arm cannot fill k=5 from V01's twelve price-variance precedents."""
    finance, support = demo_banks
    cases = [
        c
        for c in load_rows(demo_data.EXCEPTIONS, ExceptionCase)
        if (c.vendor_code, c.exception_type) == ("V01", "price_variance")
    ]
    assert cases
    b = Variant(name="starved", kind="bank_config", bank_config={"recall_budget_fixed_mid": 2})
    report = compare(hindsight.gateway, finance, support, cases, [], Variant(name="a"), b)
    assert not [d.error for d in report.diffs if d.error], [d.error for d in report.diffs if d.error]
    assert {d.case_id for d in report.diffs if d.lost} == {c.id for c in cases}  # each case lost exact precedents
    assert report.exact_lost == sum(len(d.lost) for d in report.diffs) >= len(cases)
    assert f"{report.exact_lost} exact precedent(s) lost" in report.summary()
    assert not [bank for bank in bank_ids(hindsight.gateway) if bank.startswith("ab-starved-")]


def test_a_clone_is_deleted_even_when_a_setting_is_refused(hindsight, demo_banks):
    finance, support = demo_banks
    bad = Variant(name="bad", kind="bank_config", bank_config={"recall_budget_fixed_mid": -5})
    with pytest.raises(Exception), Comparison(hindsight.gateway, finance, support, Variant(name="a"), bad):  # noqa: B017
        pass  # the server refuses the setting (whatever its error class): the clone must still go
    assert not [bank for bank in bank_ids(hindsight.gateway) if bank.startswith("ab-bad-")]
    with (
        pytest.raises(ValueError, match="unknown bank setting"),
        Comparison(
            hindsight.gateway,
            finance,
            support,
            Variant(name="a"),
            Variant(name="x", kind="bank_config", bank_config={"nope": True}),
        ),
    ):
        pass
