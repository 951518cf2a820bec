"""A what-if setting as an A/B variant: parsing (pure) and, against the real server, the demo queue
under "graph arm weight 0" predicted from one trace per recall."""

from __future__ import annotations

import json
import time

import pytest

from dashboard import demo_data
from dashboard.finance.models import ExceptionCase
from dashboard.lab.ab import Comparison, Variant, compare
from dashboard.lab.whatif import TracedQueue, WhatIf
from dashboard.queue_files import load_rows
from dashboard.support.models import Ticket
from tests.finance_helpers import precedent
from tests.helpers import bank_ids, run_command


def test_a_whatif_parses_describes_and_refuses_what_it_cannot_be():
    whatif = WhatIf.parse("graph=0, bm25=0.5, semantic=1, cap=20, min_bm25=1.5")
    assert whatif.weights == {"graph": 0.0, "bm25": 0.5} and whatif.cap == 20 and whatif.min_bm25 == 1.5
    assert whatif.describe() == "what-if: bm25 arm weight 0.5, graph arm weight 0, each arm capped at 20, BM25 gate 1.5"
    settings = whatif.settings()
    assert settings.weights == {"graph": 0.0, "bm25": 0.5} and settings.caps == dict.fromkeys(
        ("semantic", "bm25", "graph", "temporal"), 20
    )
    assert settings.min_bm25 == 1.5
    assert WhatIf.parse("default").is_default and WhatIf.parse("").describe() == "what-if: the server's settings"
    for bad, message in [
        ("graph", "expected name=value"),
        ("graph=x", "not a number"),
        ("colour=1", "expected an arm"),
        ("semantic=0,bm25=0,graph=0,temporal=0", "at least one arm"),
        ("graph=-1", "must not be negative"),
    ]:
        with pytest.raises(ValueError, match=message):
            WhatIf.parse(bad)
    with pytest.raises(ValueError, match="compare it with the server as it is"):
        Comparison(
            None,
            "f",
            "s",
            Variant(name="a", kind="whatif", whatif=WhatIf.parse("graph=0")),
            Variant(name="b", kind="bank_config", bank_config={"enable_graph_retrieval": False}),
        )


def test_each_recall_is_sent_once_with_a_trace():
    class Gateway:
        def __init__(self):
            self.calls = []

        def recall(self, bank_id, query, **kwargs):
            from dashboard.hindsight.wire import RecallResponse

            self.calls.append((bank_id, query, kwargs))
            return RecallResponse()

    gateway = Gateway()
    queue = TracedQueue(gateway)
    for whatif in (None, WhatIf.parse("graph=0"), None):
        queue.recall_fn(whatif)("bank", "q", tags=["vendor:V01"], tags_match="all_strict")
    assert gateway.calls == [("bank", "q", {"trace": True, "tags": ["vendor:V01"], "tags_match": "all_strict"})]


@pytest.fixture
def settled_banks(hindsight, demo_banks):
    # The graph arm walks links the server builds after retain: wait until they are there and settled.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        stats = hindsight.gateway.bank_stats(demo_banks.finance)
        if stats.get("total_links") and not stats.get("pending_operations"):
            break
        time.sleep(1)
    return demo_banks


def test_graph_weight_0_on_the_demo_queue_shows_which_cases_change(hindsight, settled_banks):
    finance, support = settled_banks.finance, settled_banks.support
    cases, tickets = load_rows(demo_data.EXCEPTIONS, ExceptionCase), load_rows(demo_data.TICKETS, Ticket)
    before = set(bank_ids(hindsight.gateway))
    no_graph = Variant(name="no-graph", kind="whatif", whatif=WhatIf.parse("graph=0"))
    report = compare(hindsight.gateway, finance, support, cases, tickets, Variant(name="a"), no_graph)
    assert not [d.error for d in report.diffs if d.error], [d.error for d in report.diffs if d.error]
    assert len(report.diffs) == len(cases) + len(tickets)
    # The model the what-if rests on: with the server's settings it predicts exactly what the server returned.
    assert report.prediction_checks and all(report.prediction_checks), report.prediction_checks
    assert set(bank_ids(hindsight.gateway)) == before  # nothing cloned, nothing changed on the server
    summary = report.summary()
    assert (
        summary.startswith("under B (what-if: graph arm weight 0): ") and "latency not compared (predicted)" in summary
    )
    assert f"{report.recommendations_changed} recommendation(s) change" in summary

    # The same what-if on the real server: a clone of the banks with the graph arm switched off. Both are read
    # by document id, so the prediction must name the same exact precedents and recommendations, case by case.
    clone = compare(
        hindsight.gateway,
        finance,
        support,
        cases,
        tickets,
        Variant(name="a"),
        Variant(name="graph-off", kind="bank_config", bank_config={"enable_graph_retrieval": False}),
    )
    # A clone gives every memory a new id, and candidates tied in an arm's list follow id order: where two
    # precedents tie for the last exact slot the clone may keep the other one. Everything else must agree.
    assert [(d.case_id, d.recommendation_b, d.legacy_gained, d.legacy_lost) for d in report.diffs] == [
        (d.case_id, d.recommendation_b, d.legacy_gained, d.legacy_lost) for d in clone.diffs
    ]
    disagree = [
        (p.case_id, p.gained, p.lost, c.gained, c.lost)
        for p, c in zip(report.diffs, clone.diffs, strict=True)
        if (p.gained, p.lost) != (c.gained, c.lost)
    ]
    assert len(disagree) <= len(cases) // 10, disagree
    changed = sorted(d.case_id for d in report.diffs if d.changed)
    print(f"graph weight 0 changes {len(changed)} case(s): {changed}; {summary}")

    # A what-if that must move things, whatever the ties: with the keyword arm alone, a precedent that shares no
    # word with its case's query has no score left and drops out of pass 1. V12's second precedent, retained
    # below, says what E-1015 says in other words: the semantic arm finds it by default, the keyword arm never.
    hindsight.gateway.retain(
        finance,
        [
            precedent(
                "PREC-V12-PRI-01",
                "V12",
                "price_variance",
                "approve",
                text="Brightline Freight linehaul billed above the quoted lane rate: approved.",
            ),
            precedent(
                "PREC-V12-PRI-02",
                "V12",
                "price_variance",
                "reject",
                text="Haulage charges invoiced over agreed route tariff: declined.",
            ),
        ],
    )
    keywords = compare(
        hindsight.gateway,
        finance,
        support,
        cases,
        tickets,
        Variant(name="a"),
        Variant(name="kw", kind="whatif", whatif=WhatIf.parse("semantic=0,graph=0,temporal=0")),
    )
    moved = [d for d in keywords.diffs if d.changed]
    assert ("E-1015", ["PREC-V12-PRI-02"]) in [(d.case_id, d.lost) for d in moved] and all(keywords.prediction_checks)
    assert keywords.exact_lost == sum(len(d.lost) for d in moved) and keywords.exact_gained == sum(
        len(d.gained) for d in moved
    )
    print(f"keywords only changes {len(moved)} case(s): {sorted(d.case_id for d in moved)}; {keywords.summary()}")


def test_two_whatifs_against_each_other_and_the_default_against_the_server(
    hindsight, demo_banks_read_only, monkeypatch, capsys
):
    finance, support = demo_banks_read_only.finance, demo_banks_read_only.support
    cases = load_rows(demo_data.EXCEPTIONS, ExceptionCase)[:6]
    tickets = load_rows(demo_data.TICKETS, Ticket)[:4]
    same = compare(
        hindsight.gateway,
        finance,
        support,
        cases,
        tickets,
        Variant(name="a"),
        Variant(name="b", kind="whatif", whatif=WhatIf()),
    )
    assert not any(d.changed for d in same.diffs) and all(same.prediction_checks)
    both = compare(
        hindsight.gateway,
        finance,
        support,
        cases,
        tickets,
        Variant(name="a", kind="whatif", whatif=WhatIf.parse("graph=0")),
        Variant(name="b", kind="whatif", whatif=WhatIf.parse("graph=0, cap=10")),
    )
    assert not [d.error for d in both.diffs if d.error] and len(both.diffs) == len(cases) + len(tickets)
    assert both.summary().startswith("under B (what-if: graph arm weight 0, each arm capped at 10): ")

    # the same from the command line
    monkeypatch.setenv("RECALL_REVIEW_SUPPORT_BANK", support)
    code, out, err = run_command(
        monkeypatch, capsys, hindsight, finance, "ab-compare", "--b-whatif", "graph=0", "--json"
    )
    assert code == 0, err
    payload = json.loads(out)
    assert payload["summary"].startswith("under B (what-if: graph arm weight 0): ")
    assert payload["prediction_checks"]["recalls"] == payload["prediction_checks"]["default_equals_server"] > 0
    assert len(payload["cases"]) == len(load_rows(demo_data.EXCEPTIONS, ExceptionCase)) + len(
        load_rows(demo_data.TICKETS, Ticket)
    )
    code, out, err = run_command(
        monkeypatch,
        capsys,
        hindsight,
        finance,
        "ab-compare",
        "--a",
        "graph=0",
        "--b-bank-config",
        "enable_graph_retrieval=false",
    )
    assert code == 2 and "compare it with the server as it is" in err
