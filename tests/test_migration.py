"""Migration to tags against the real server: dry run, apply, idempotence, resume after a crash."""

import json

import pytest

from dashboard import demo_data
from dashboard.cli.seed import seed_bank, stored_documents, support_records
from dashboard.hindsight.errors import HindsightUnavailable
from dashboard.queue_files import load_rows
from dashboard.support import migration
from dashboard.support.models import Customer
from dashboard.support.recall import recall_for_ticket
from tests.helpers import run_cli

CUSTOMERS = load_rows(demo_data.CUSTOMERS, Customer, id_field="name")
RELIABLE = {
    "SUP-L-001": "customer:ann-lee", "SUP-L-002": "customer:ann-lee", "SUP-L-003": "customer:ann-leeds",
    "SUP-L-004": "customer:ann-leeds", "SUP-L-007": "customer:sean-o-brien", "SUP-L-008": "customer:a-j-smith-uk",
    "SUP-L-010": "customer:jo-co-design", "SUP-L-011": "customer:dr-kwame-mensah", "SUP-L-012": "customer:priya-nair",
}  # fmt: skip
FAILED = {"SUP-L-005": "not at the start", "SUP-L-006": "no 'Customer", "SUP-L-009": "unknown customer", "SUP-L-013": "unknown customer"}


@pytest.fixture
def support_bank(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, support_records())
    return bank_id


def state(hindsight, bank):
    """document id -> (text, tags) plus how many memories each document has (duplicates would show)."""
    memories = hindsight.gateway.list_memories(bank, limit=100)["items"]
    counts = {}
    for m in memories:
        counts[m["document_id"]] = counts.get(m["document_id"], 0) + 1
    return stored_documents(hindsight.gateway, bank), counts


def test_dry_run_classifies_and_changes_nothing(hindsight, support_bank):
    before = state(hindsight, support_bank)
    plan = migration.plan(hindsight.gateway, support_bank, CUSTOMERS)
    assert state(hindsight, support_bank) == before
    assert {c.document_id: c.tag for c in plan.reliable} == RELIABLE
    assert {c.document_id for c in plan.failed} == set(FAILED)
    for c in plan.failed:
        assert FAILED[c.document_id] in c.reason
    assert plan.counts() == {"untagged": 13, "reliable": 9, "failed": 4}
    assert plan.coverage.total == 18 and plan.coverage.tagged == 5 and not plan.coverage.ready_to_retire_fallback


def test_untagged_listing_uses_the_exact_empty_tag_filter(hindsight, support_bank):
    untagged = migration.untagged_memories(hindsight.gateway, support_bank)
    raw = hindsight.gateway.list_memories(support_bank, tags=[], tags_match="exact", limit=100)
    assert raw["total"] == 13 == len(untagged)  # the server itself filters: only untagged records come back
    assert all(not item["tags"] for item in raw["items"])


def test_apply_converts_exactly_the_reliable_records_in_place_and_twice_changes_nothing(hindsight, support_bank):
    texts_before, _ = state(hindsight, support_bank)
    report = migration.apply(hindsight.gateway, support_bank, CUSTOMERS, batch_size=4)
    assert sorted(report.converted) == sorted(RELIABLE) and report.error is None
    docs, counts = state(hindsight, support_bank)
    assert set(counts.values()) == {1} and len(docs) == 18  # replaced in place: no duplicates
    for doc, tag in RELIABLE.items():
        assert docs[doc] == (texts_before[doc][0], (tag,))  # same text, now tagged
    for doc in FAILED:
        assert docs[doc] == texts_before[doc]  # untouched, still untagged
    untagged_left = {m.document_id for m in migration.untagged_memories(hindsight.gateway, support_bank)}
    assert untagged_left == set(FAILED)
    assert (report.before.convertible, report.after.convertible) == (9, 0)
    assert (report.before.tagged, report.after.tagged) == (5, 14) and report.after.ready_to_retire_fallback
    meta = hindsight.gateway.list_memories(support_bank, document_id="SUP-L-008")["items"][0]["metadata"]
    assert meta == {"kind": "interaction", "customer": "A.J. Smith (UK)", "migrated_from": "untagged-legacy"}

    second = migration.apply(hindsight.gateway, support_bank, CUSTOMERS)
    assert second.converted == [] and state(hindsight, support_bank) == (docs, counts)

    # after the migration Ann Lee's history is on the tagged path, and Ann Leeds' records are not hers
    result = recall_for_ticket(hindsight.gateway.recall, support_bank, "Ann Lee", "charged twice")
    assert result.path == "tagged" and {e.document_id for e in result.tagged} == {"SUP-L-001", "SUP-L-002"}


def test_a_run_killed_halfway_then_rerun_ends_like_a_clean_run(hindsight, support_bank, bank_id):
    # clean reference run in its own bank
    clean_bank = bank_id + "-clean"
    seed_bank(hindsight.gateway, clean_bank, support_records())
    migration.apply(hindsight.gateway, clean_bank, CUSTOMERS)
    clean = state(hindsight, clean_bank)

    sent = []

    def dying_retain(bank, records):  # writes 2 records of the second batch, then the process "dies"
        if len(sent) >= 3:
            hindsight.gateway.retain(bank, records[:2])
            sent.extend(records[:2])
            raise HindsightUnavailable("killed")
        hindsight.gateway.retain(bank, records)
        sent.extend(records)

    crashed = migration.apply(hindsight.gateway, support_bank, CUSTOMERS, batch_size=3, retain=dying_retain)
    assert crashed.error and "killed" in crashed.error
    assert len(crashed.converted) == 3 and crashed.after.convertible == 4  # 3 + 2 written, 4 left
    resumed = migration.apply(hindsight.gateway, support_bank, CUSTOMERS, batch_size=3)
    assert len(resumed.converted) == 4 and resumed.error is None
    assert state(hindsight, support_bank) == clean


def test_limit_converts_in_steps(hindsight, support_bank):
    first = migration.apply(hindsight.gateway, support_bank, CUSTOMERS, limit=5)
    assert len(first.converted) == 5 and first.after.convertible == 4 and not first.after.ready_to_retire_fallback
    second = migration.apply(hindsight.gateway, support_bank, CUSTOMERS, limit=5)
    assert len(second.converted) == 4 and second.after.ready_to_retire_fallback
    assert not set(first.converted) & set(second.converted)


def test_an_unsafe_directory_is_refused(hindsight, support_bank):
    clash = [*CUSTOMERS, Customer(name="Jo Co Design")]
    plan = migration.plan(hindsight.gateway, support_bank, clash)
    assert plan.directory_problems and plan.reliable == []
    with pytest.raises(migration.DirectoryError, match="customer:jo-co-design"):
        migration.apply(hindsight.gateway, support_bank, clash)
    assert len(migration.untagged_memories(hindsight.gateway, support_bank)) == 13


def _cli(hindsight, bank, *args):
    return run_cli(hindsight, "migrate", *args, support=bank)


def test_cli_migrate_dry_run_then_apply(hindsight, support_bank):
    dry = _cli(hindsight, support_bank, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    payload = json.loads(dry.stdout)
    assert payload["counts"] == {"untagged": 13, "reliable": 9, "failed": 4}
    assert {r["document_id"]: r["status"] for r in payload["records"]}["SUP-L-009"] == "failed"
    assert all(r["reason"] for r in payload["records"])
    applied = json.loads(_cli(hindsight, support_bank, "--apply", "--json").stdout)
    assert len(applied["converted"]) == 9 and applied["after"]["ready_to_retire_fallback"] is True
    again = json.loads(_cli(hindsight, support_bank, "--apply", "--json").stdout)
    assert again["converted"] == []
    bad = _cli(hindsight, support_bank, "--apply", "--limit", "-1")
    assert bad.returncode == 2 and "--limit" in bad.stderr and "Traceback" not in bad.stderr
