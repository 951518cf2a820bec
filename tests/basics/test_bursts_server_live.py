"""Bursts judged on what the server itself knows (hindsight/write_facts.py), both server modes: its own write time (a
writer's timestamps spread over six months prove nothing) and the bank's embeddings (paraphrases share few words)."""

from __future__ import annotations

from pathlib import Path

from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import OUTCOME_WORDS
from dashboard.finance.policy import as_they_claim, assess, recommend
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.hindsight.write_facts import SAME_MEANING, asker, server_view
from dashboard.support.recall import recall_for_ticket
from dashboard.support.trust import origins_in_words
from dashboard.trust.bursts import Candidate
from tests.conftest import PROVEN
from tests.helpers import demo_case, demo_ticket
from tests.poisoning import poison

CASE, TICKET = demo_case("E-1002"), demo_ticket("T-2004")  # V02 price variance (the demo says reject); Ann Lee
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _row(live, technique: str, by_writer, by_server) -> None:
    """The poisoning table's row for the technique (docs/reliability-and-security.md), in test-artifacts/."""
    words = lambda rec: f"{OUTCOME_WORDS[rec.action]} ({rec.confidence:.2f})"  # noqa: E731
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"bursts-{technique}-{live.mode}.md").write_text(
        f"| {technique} | AP exception E-1002 | {words(recommend(as_they_claim(by_writer), untrusted_decides=True))} "
        f"| writer's time and words: {words(recommend(by_writer))}; server's: {words(recommend(by_server))} |\n"
    )


def _case(live, bank: str, ask_server=None):
    result = two_stage_recall(
        live.gateway.recall, bank, CaseKey.of(CASE), CASE.recall_query(), own_document=document_id_for(CASE.id)
    )
    return assess(result, PROVEN, ask_server=ask_server)


def _repeats(result, documents: list[str]) -> list[str]:
    return [
        r.set_aside
        for r in result.records
        if r.document_id in documents and (r.set_aside or "").startswith("one of a burst")
    ]


def test_notes_months_apart_by_their_own_timestamps_written_in_one_burst_are_one(live, live_demo_banks):
    """Six agent-style notes whose writer-chosen timestamps are a month apart each, retained in one go."""
    bank, notes = live_demo_banks.finance, poison("notes_spread_over_six_months", "exception")
    live.gateway.retain(bank, notes.records())
    documents = [doc for doc, _ in notes.documents()]

    by_writer, _ = _case(live, bank)
    recalled = [r for r in by_writer.records if r.document_id in documents]  # as many as the case's k leaves room for
    assert len(recalled) >= 3, [r.document_id for r in by_writer.records]
    assert _repeats(by_writer, documents) == []  # the writer's timestamps: a month apart each, no burst

    by_server, rec = _case(live, bank, asker(live.gateway, bank))
    repeats = _repeats(by_server, documents)
    assert len(repeats) == len(recalled) - 1, [r.set_aside for r in by_server.records]  # the burst votes once
    assert all(
        f"{len(recalled)} near-identical records from unknown origin within" in r and "minute" in r for r in repeats
    ), repeats
    assert rec.action != "approve", rec.rationale
    _row(live, "notes spread over six months", by_writer, by_server)


def test_paraphrases_within_35_minutes_are_a_burst_by_the_banks_embeddings(live, live_demo_banks):
    """Six paraphrases of one approval (few words in common), retained together."""
    bank, paraphrases = live_demo_banks.finance, poison("paraphrased_within_35_minutes", "exception")
    live.gateway.retain(bank, paraphrases.records())
    documents = [doc for doc, _ in paraphrases.documents()]

    by_words, _ = _case(live, bank)
    assert _repeats(by_words, documents) == []  # word shingles do not see them as copies

    recalled = [r for r in by_words.records if r.document_id in documents]
    view = server_view(live.gateway, bank, [Candidate(r.id, r.document_id, r.text) for r in recalled])
    assert len(view.alike) >= len(recalled) - 1, view.alike  # enough pairs to link every recalled paraphrase
    assert set(view.written) == {r.id for r in recalled}

    by_meaning, rec = _case(live, bank, asker(live.gateway, bank))
    assert len(_repeats(by_meaning, documents)) == len(recalled) - 1, [r.set_aside for r in by_meaning.records]
    assert rec.action != "approve", rec.rationale
    _row(live, "paraphrased within 35 minutes", by_words, by_meaning)


def test_distinct_records_written_together_are_no_burst(live, live_demo_banks):
    """Three records of unknown origin retained together, about one vendor's variance for different reasons: not near
    enough in words or meaning to be one burst, so each still counts (the rule, not a burst, keeps them from deciding)."""
    bank = live_demo_banks.finance
    texts = {
        "note-freight": "Vendor V02 (Acme Fasteners) price variance: freight surcharge on a rush order for M8 washers.",
        "note-currency": "Vendor V02 price variance explained by the euro exchange rate on the invoice date; treasury confirmed.",
        "note-rounding": "Price variance on V02 hex bolts is a unit-of-measure error: the invoice bills boxes of 100, the PO single bolts.",
    }
    from dashboard.hindsight.wire import MemoryRecord

    live.gateway.retain(
        bank,
        [
            MemoryRecord(
                document_id=doc,
                content=text,
                tags=["vendor:V02", "type:price_variance", "kind:decision"],
                metadata={"vendor_code": "V02", "exception_type": "price_variance"},
                context="AP exception decision",
            )
            for doc, text in texts.items()
        ],
    )
    result, _ = _case(live, bank)
    recalled = [r for r in result.records if r.document_id in texts]
    assert len(recalled) == 3, [r.document_id for r in result.records]
    view = server_view(live.gateway, bank, [Candidate(r.id, r.document_id, r.text) for r in recalled])
    assert len(view.alike) < 2, (view.alike, SAME_MEANING)  # at most a pair (measured: one at 0.55), never three linked
    judged, _ = _case(live, bank, asker(live.gateway, bank))
    assert _repeats(judged, list(texts)) == []


def test_a_tickets_paraphrased_burst_is_said_on_each_card_by_the_server(live, live_demo_banks):
    """Support: the repetition attack's copies retained in one go are a burst by the server's clock and embeddings."""
    bank, attack = live_demo_banks.support, poison("repetition", "ticket")
    live.gateway.retain(bank, attack.records())
    documents = {doc for doc, _ in attack.documents()}
    recall = recall_for_ticket(
        live.gateway.recall, bank, TICKET.customer, TICKET.issue, read_document=live.gateway.document
    )
    recalled = [e for e in [*recall.evidence, *recall.legacy_rejected] if e.document_id in documents]
    assert len(recalled) >= 3
    words = origins_in_words(recalled, PROVEN, bank, asker(live.gateway, bank))
    assert all("one of a burst" in words[e.ref] for e in recalled), words


class _Counting:
    """The gateway, counting what write_facts asks it (its documents and recalls)."""

    def __init__(self, gateway):
        self.gateway, self.base_url, self.asked = gateway, gateway.base_url, 0

    def document(self, *args, **kwargs):
        self.asked += 1
        return self.gateway.document(*args, **kwargs)

    def recall(self, *args, **kwargs):
        self.asked += 1
        return self.gateway.recall(*args, **kwargs)


def test_the_agents_and_the_queues_flags_judge_bursts_on_the_servers_time_and_ask_it_once(
    live, live_demo_banks, tmp_path
):
    """The notes months apart by their own timestamps, written in one burst: the finance agent's run and the queue's
    flags (what bulk approval and the Overview read) set them aside as one burst, as the case page does; the server is
    asked once for the same records of the same bank, not on every judgement."""
    from dashboard.agents.runner import run_exception
    from dashboard.finance import flags as finance_flags
    from dashboard.review.casework import Casework
    from dashboard.store.agent_runs import AgentRunStore
    from dashboard.store.db import make_engine

    bank, notes = live_demo_banks.finance, poison("notes_spread_over_six_months", "exception")
    live.gateway.retain(bank, notes.records())
    documents = [doc for doc, _ in notes.documents()]
    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}", tmp_path)

    run = run_exception(live.gateway, AgentRunStore(engine), bank, CASE, "reviewed", origin=PROVEN)
    bursts = [
        e
        for e in run.output["evidence"]
        if e["id"] in documents and (e["set_aside"] or "").startswith("one of a burst")
    ]
    assert len(bursts) >= 2 and run.output["action"] != "approve", run.output["rationale"]

    result = two_stage_recall(
        live.gateway.recall, bank, CaseKey.of(CASE), CASE.recall_query(), own_document=document_id_for(CASE.id)
    )
    counting = _Counting(live.gateway)
    casework = Casework(engine)
    finance_flags.keep(casework, bank, {CASE.id: result}, PROVEN, asker(counting, bank))
    flags = finance_flags.stored(casework.flags(bank, "exception", [CASE.id]).get(CASE.id))
    assert flags is not None and len([ref for ref in flags.set_aside if any(doc in ref for doc in documents)]) == len(
        bursts
    )
    assert flags.action != "approve"
    asked = counting.asked
    finance_flags.keep(casework, bank, {CASE.id: result}, PROVEN, asker(counting, bank))  # the queue judged again
    assert counting.asked == asked  # the same records of the same bank: what the server said is reused
    fresh = [r for r in result.records if r.document_id in documents]
    server_view(
        counting, f"{bank}-another", [Candidate(r.id, r.document_id, r.text) for r in fresh]
    )  # another bank: asked
    assert counting.asked > 0
    engine.dispose()
