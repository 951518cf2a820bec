"""Relevance labels on evidence cards, against the real server: three reviewed cases (one labelled by a click on
the Finance exceptions page) feed `evidence-bench --from-reviews`, whose figures equal a recount by hand; the
export lists every label with its provenance; the Overview shows the label figures."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest

from dashboard.agents.runner import run_exception
from dashboard.delivery.outbox import Outbox
from dashboard.finance.pages.evidence import recall_contexts
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.review.relevance import RelevanceLabels
from dashboard.store.agent_runs import AgentRunStore
from dashboard.store.db import make_engine
from dashboard.store.errors import NotAllowed
from tests.conftest import review_database
from tests.helpers import demo_case, open_page, run_command, texts

AUDITED, RUN_ONLY, PAGE_ONLY = "E-1004", "E-1005", "E-1001"  # V06 price (5 exact), V03 quantity (4), V01 price (12)


@pytest.fixture
def store_url(hindsight, monkeypatch):
    """A fresh PostgreSQL review store that the commands and the app share."""
    with review_database(hindsight.settings) as url:
        monkeypatch.setenv("RECALL_REVIEW_DATABASE_URL", url)
        monkeypatch.setenv("RECALL_REVIEW_DELIVERY_WORKER", "false")  # no worker thread outlives the dropped database
        yield url


def _exact(run):
    return next(r for r in run.recalls if r.label == "exact")


def _documents(results) -> list[str]:
    return [r.document_id for r in results if r.kind == "document"]


def test_labels_from_three_cases_feed_the_bench_the_export_and_the_overview(
    hindsight, demo_banks, store_url, point_app, monkeypatch, capsys, tmp_path
):
    bank, gateway = demo_banks.finance, hindsight.gateway
    engine = make_engine(store_url, tmp_path)
    labels, runs = RelevanceLabels(engine), AgentRunStore(engine)

    # The agent's runs: one before the audit log is on (its recalls are known from the run only), one after.
    run_only = run_exception(gateway, runs, bank, demo_case(RUN_ONLY), "reviewed")
    gateway.enable_audit_log(bank)
    audited = run_exception(gateway, runs, bank, demo_case(AUDITED), "reviewed")
    assert not run_only.audit_log and _exact(audited).audit_id

    def cards(case_id: str):
        case = demo_case(case_id)
        result = two_stage_recall(gateway.recall, bank, CaseKey.of(case), case.recall_query())
        return [e.document_id for e in result.exact], recall_contexts(result)

    def label(case_id, contexts, document, value, who, role="reviewer"):
        labels.record(bank, "exception", case_id, document, value, role=role, reviewer=who, context=contexts[document])

    a, a_contexts = cards(AUDITED)
    label(AUDITED, a_contexts, a[0], "relevant", "Dana")
    label(AUDITED, a_contexts, a[1], "not_relevant", "Dana")
    label(AUDITED, a_contexts, a[2], "relevant", "Dana")
    label(AUDITED, a_contexts, a[0], "relevant", "Lee")
    label(AUDITED, a_contexts, a[2], "not_relevant", "Lee")
    label(AUDITED, a_contexts, a[3], "wrong", "Lee")
    label(AUDITED, a_contexts, a[2], "relevant", "Kim")  # a[2]: two of three reviewers
    b, b_contexts = cards(RUN_ONLY)
    label(RUN_ONLY, b_contexts, b[0], "relevant", "Dana")
    label(RUN_ONLY, b_contexts, b[0], "wrong", "Dana")  # a change of mind: the latest counts
    label(RUN_ONLY, b_contexts, b[1], "relevant", "Dana")
    with pytest.raises(NotAllowed):
        label(RUN_ONLY, b_contexts, b[2], "relevant", "Vic", role="viewer")

    # A click on an evidence card of the page stores a label (the case no agent ran on: the dashboard's request).
    point_app(hindsight.env(finance=bank, support=demo_banks.support), outbox=Outbox(engine))
    at = open_page("../finance/pages/exceptions.py", case=PAGE_ONLY)
    at.text_input(key="reviewer_name").input("Dana").run()
    prefix = f"relevance_exception_{PAGE_ONLY}_"
    first_card = next(w for w in at.segmented_control if w.key.startswith(prefix))
    c0 = first_card.key.removeprefix(prefix).removesuffix("_Dana")
    first_card.set_value("relevant").run()
    assert not at.exception, at.exception
    assert "Labelled relevant by Dana on " in texts(at).replace("\\", "")
    [clicked] = labels.latest(case=(bank, "exception", PAGE_ONLY))
    assert (clicked.document_id, clicked.label, clicked.reviewer, clicked.tags_match) == (
        c0,
        "relevant",
        "Dana",
        "all_strict",
    )
    c, c_contexts = cards(PAGE_ONLY)
    assert c[0] == c0
    label(PAGE_ONLY, c_contexts, c[1], "not_relevant", "Lee")

    expected = {AUDITED: {a[0], a[2]}, RUN_ONLY: {b[1]}, PAGE_ONLY: {c0}}

    # evidence-bench --from-reviews: each case's request as recorded, and the figures of a recount by hand.
    code, out, err = run_command(monkeypatch, capsys, hindsight, bank, "evidence-bench", "--from-reviews", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["cases"] == 3 and report["failed"] == []
    labelled = {entry["case"]: entry for entry in report["labelled_set"]}
    assert {case: set(entry["expected_document_ids"]) for case, entry in labelled.items()} == expected
    assert {case: entry["request_from"] for case, entry in labelled.items()} == {
        AUDITED: "audit log",
        RUN_ONLY: "agent run",
        PAGE_ONLY: "dashboard",
    }
    for case_id, run in ((AUDITED, audited), (RUN_ONLY, run_only)):
        exact = _exact(run)
        assert (labelled[case_id]["query"], labelled[case_id]["tags"], labelled[case_id]["tags_match"]) == (
            exact.query,
            exact.tags,
            "all_strict",
        )
    assert labelled[PAGE_ONLY]["tags"] == c_contexts[c0].tags

    k, precisions, reciprocal_ranks, hits = report["k"], [], [], 0
    for entry, figures in zip(report["labelled_set"], report["per_case"], strict=True):
        response = gateway.recall(bank, entry["query"], tags=entry["tags"], tags_match=entry["tags_match"])
        documents = list(dict.fromkeys(m.document_id for m in response.results if m.document_id))
        relevant = expected[entry["case"]]
        top = documents[:k]
        first = next((rank for rank, d in enumerate(documents, 1) if d in relevant), None)
        precisions.append(sum(d in relevant for d in top) / len(top))
        reciprocal_ranks.append(1 / first if first else 0.0)
        hits += any(d in relevant for d in top)
        assert (figures["precision_at_k"], figures["reciprocal_rank"]) == (
            pytest.approx(precisions[-1]),
            pytest.approx(reciprocal_ranks[-1]),
        )
    assert report["precision_at_k"] == pytest.approx(sum(precisions) / 3)
    assert report["mrr"] == pytest.approx(sum(reciprocal_ranks) / 3)
    assert report["evidence_at_k"] == hits
    assert 0 < report["precision_at_k"] < 1  # not every document in the lists is labelled relevant
    assert report["grid_baseline"]["evidence_at_k"] == report["evidence_at_k"] and report["grid"]

    # The export: every click, with who, in which role, when, and on which request.
    code, out, err = run_command(monkeypatch, capsys, hindsight, bank, "labels-export", "--json")
    assert code == 0, err
    exported = [row for row in json.loads(out) if row["bank_id"] == bank]
    assert len(exported) == 12
    changed = [row for row in exported if row["case_id"] == RUN_ONLY and row["document_id"] == b[0]]
    assert [row["label"] for row in changed] == ["relevant", "wrong"]
    row = changed[0]
    assert (row["case_kind"], row["reviewer"], row["role"], row["tags_match"]) == (
        "exception",
        "Dana",
        "reviewer",
        "all_strict",
    )
    assert row["query"] == demo_case(RUN_ONLY).recall_query() and "vendor:V03" in row["tags"]
    assert datetime.fromisoformat(row["created_at"]) <= datetime.now(UTC)
    code, out, _ = run_command(monkeypatch, capsys, hindsight, bank, "labels-export", "--csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(table) == 12 and json.loads(table[0]["tags"]) == exported[0]["tags"]

    # The Overview: this week's label figures over the three cases, from the lists their requests returned.
    lists = {
        AUDITED: _documents(_exact(audited).results),
        RUN_ONLY: _documents(_exact(run_only).results),
        PAGE_ONLY: c_contexts[c0].ranked,
    }
    top5 = {case: documents[:5] for case, documents in lists.items()}
    precision5 = sum(sum(d in expected[case] for d in top) / len(top) for case, top in top5.items()) / 3
    mrr = sum(1 / next(i for i, d in enumerate(lists[case], 1) if d in expected[case]) for case in lists) / 3
    at = open_page("views/overview.py")
    [frame] = [
        d.value for d in at.dataframe if "precision@5" in d.value.columns
    ]  # display-only tables have no key in AppTest
    everything = frame[frame["by"] == "all"].iloc[0]
    assert (everything["cases"], everything["labels"], everything["relevant documents"]) == (3, 11, 4)
    assert (everything["precision@5"], everything["MRR"]) == (round(precision5, 3), round(mrr, 3))
    assert set(frame[frame["by"] == "vendor"]["group"]) == {"V06", "V03", "V01"}
    assert {m.label: m.value for m in at.metric}["Label MRR"] == f"{mrr:.2f}"


def test_a_tickets_record_is_labelled_by_a_click_and_the_fusion_lab_runs_on_the_reviewers_labels(
    hindsight, demo_banks, store_url, point_app, tmp_path
):
    engine = make_engine(store_url, tmp_path)
    point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support), outbox=Outbox(engine))
    at = open_page("../support/pages/tickets.py", ticket="T-2003")  # the tagged path: SUP-T-005 reaches the ticket
    at.text_input(key="ticket_reviewer").input("Dana").run()
    at.segmented_control(key="relevance_ticket_T-2003_SUP-T-005_Dana").set_value("relevant").run()
    assert not at.exception, at.exception
    [stored] = RelevanceLabels(engine).latest(case=(demo_banks.support, "ticket", "T-2003"))
    assert (stored.document_id, stored.label, stored.reviewer, stored.tags_match) == (
        "SUP-T-005",
        "relevant",
        "Dana",
        "any_strict",
    )
    assert stored.tags and "SUP-T-005" in stored.ranked

    at = open_page("views/traces.py")
    at.selectbox(key="console_bank").set_value(demo_banks.support)
    at.text_input(key="console_query").input("refund")
    at.form_submit_button[0].click().run()
    at.radio(key="lab_set_source").set_value("Reviewers' labels").run()
    at.button(key="lab_run").click().run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cases"] == "1" and metrics["Evidence in returned top 10"] == "1 (100%)"  # its own request finds it
