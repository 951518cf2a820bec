"""Migration to tags against the real server, in both modes (verbatim, and extracting: each document
stored as several rewritten facts): dry run, apply, idempotence, resume after a crash, all per document."""

import json
import uuid

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import demo_data
from dashboard.cli.registry import main as cli_main
from dashboard.cli.seed import seed_bank, stored_documents, support_records
from dashboard.hindsight.errors import HindsightUnavailable
from dashboard.queue_files import load_rows
from dashboard.support import migration
from dashboard.support.models import Customer
from dashboard.support.recall import recall_for_ticket
from tests.conftest import APP, forget_banks, shared_demo_of
from tests.helpers import run_cli

CUSTOMERS = load_rows(demo_data.CUSTOMERS, Customer, id_field="name")
RELIABLE = {
    "SUP-L-001": "customer:ann-lee",
    "SUP-L-002": "customer:ann-lee",
    "SUP-L-003": "customer:ann-leeds",
    "SUP-L-004": "customer:ann-leeds",
    "SUP-L-007": "customer:sean-o-brien",
    "SUP-L-008": "customer:a-j-smith-uk",
    "SUP-L-010": "customer:jo-co-design",
    "SUP-L-011": "customer:dr-kwame-mensah",
    "SUP-L-012": "customer:priya-nair",
}
FAILED = {
    "SUP-L-005": "not at the start",
    "SUP-L-006": "no 'Customer",
    "SUP-L-009": "unknown customer",
    "SUP-L-013": "unknown customer",
}


@pytest.fixture
def support_bank(live):
    """The demo's support history as seeded, never migrated: a copy of the session's seeded bank (with an LLM, a
    copy costs a fraction of seeding)."""
    bank = f"sup-{uuid.uuid4().hex[:8]}"
    live.gateway.clone_banks({shared_demo_of(live).support: bank})
    yield bank
    forget_banks(live, bank)  # a bank left on the session's server makes later queries dearer


def state(live, bank):
    """document id -> (content hash, tags): each document once, however many memories the server made of it."""
    documents = stored_documents(live.gateway, bank)
    assert live.gateway.list_documents(bank, limit=1)["total"] == len(documents)
    return documents


def test_dry_run_classifies_documents_by_their_original_text_and_changes_nothing(live, shared_demo):
    support_bank = shared_demo.support  # read only (a dry run): the session's seeded bank, no copy of its own
    before = state(live, support_bank)
    plan = migration.plan(live.gateway, support_bank, CUSTOMERS)
    assert state(live, support_bank) == before
    assert {c.document_id: c.tag for c in plan.reliable} == RELIABLE
    assert {c.document_id for c in plan.failed} == set(FAILED)
    for c in plan.failed:
        assert FAILED[c.document_id] in c.reason
    assert plan.counts() == {"untagged": 13, "reliable": 9, "failed": 4}
    assert plan.coverage.total == 18 and plan.coverage.tagged == 5 and not plan.coverage.ready_to_retire_fallback


def test_untagged_listing_uses_the_exact_empty_tag_filter(live, shared_demo):
    support_bank = shared_demo.support  # read only
    untagged = migration.legacy_documents(live.gateway, support_bank)
    raw = live.gateway.list_documents(support_bank, untagged=True, limit=100)
    assert raw["total"] == 13 == len(untagged)  # the server itself filters: only untagged documents come back
    assert all(not item["tags"] for item in raw["items"])
    sent = {r.document_id: r.content for r in support_records() if not r.tags}
    assert {d.id: d.original_text for d in untagged} == sent  # each document's text exactly as it was sent


def test_apply_converts_exactly_the_reliable_documents_in_place_and_twice_changes_nothing(live, support_bank):
    before = state(live, support_bank)
    report = migration.apply(live.gateway, support_bank, CUSTOMERS, batch_size=4)
    assert sorted(report.converted) == sorted(RELIABLE) and report.error is None
    live.settle(support_bank)
    docs = state(live, support_bank)
    assert len(docs) == 18  # replaced in place: no duplicate document
    for doc, tag in RELIABLE.items():
        assert docs[doc][:2] == (before[doc][0], (tag,))  # the same original text, now tagged
    for doc in FAILED:
        assert docs[doc] == before[doc]  # untouched, still untagged
    assert {d.id for d in migration.legacy_documents(live.gateway, support_bank)} == set(FAILED)
    assert (report.before.convertible, report.after.convertible) == (9, 0)
    assert (report.before.tagged, report.after.tagged) == (5, 14) and report.after.ready_to_retire_fallback
    facts = live.gateway.list_memories(support_bank, document_id="SUP-L-008")["items"]
    migrated = {"kind": "interaction", "customer": "A.J. Smith (UK)", "migrated_from": "untagged-legacy"}
    assert facts and all(migrated.items() <= f["metadata"].items() for f in facts)  # beside the seed's own metadata

    second = migration.apply(live.gateway, support_bank, CUSTOMERS)
    assert second.converted == [] and state(live, support_bank) == docs

    # after the migration Ann Lee's history is on the tagged path, and Ann Leeds' records are not hers
    result = recall_for_ticket(
        live.gateway.recall, support_bank, "Ann Lee", "charged twice", read_document=live.gateway.document
    )
    assert result.path == "tagged" and {e.document_id for e in result.tagged} == {"SUP-L-001", "SUP-L-002"}


def test_a_run_killed_halfway_then_rerun_ends_like_a_clean_run(hindsight, bank_id):
    # verbatim only: what is tested is the migration's bookkeeping, the same in both modes
    support_bank, clean_bank = bank_id, bank_id + "-clean"
    for bank in (support_bank, clean_bank):
        seed_bank(hindsight.gateway, bank, support_records())
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


def test_limit_converts_in_steps(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, support_records())
    first = migration.apply(hindsight.gateway, bank_id, CUSTOMERS, limit=5)
    assert len(first.converted) == 5 and first.after.convertible == 4 and not first.after.ready_to_retire_fallback
    second = migration.apply(hindsight.gateway, bank_id, CUSTOMERS, limit=5)
    assert len(second.converted) == 4 and second.after.ready_to_retire_fallback
    assert not set(first.converted) & set(second.converted)


def test_an_unsafe_directory_is_refused(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, support_records())
    clash = [*CUSTOMERS, Customer(name="Jo Co Design")]
    plan = migration.plan(hindsight.gateway, bank_id, clash)
    assert plan.directory_problems and plan.reliable == []
    with pytest.raises(migration.DirectoryError, match="customer:jo-co-design"):
        migration.apply(hindsight.gateway, bank_id, clash)
    assert len(migration.legacy_documents(hindsight.gateway, bank_id)) == 13


def test_cli_migrate_dry_run_then_apply(live, support_bank):
    dry = run_cli(live, "migrate", "--dry-run", "--json", support=support_bank)
    assert dry.returncode == 0, dry.stderr
    payload = json.loads(dry.stdout)
    assert payload["counts"] == {"untagged": 13, "reliable": 9, "failed": 4}
    assert payload["coverage"]["total"] == 18  # documents, however many memories each became
    assert {r["document_id"]: r["status"] for r in payload["records"]}["SUP-L-009"] == "failed"
    assert all(r["reason"] for r in payload["records"])
    applied = json.loads(run_cli(live, "migrate", "--apply", "--json", support=support_bank).stdout)
    assert len(applied["converted"]) == 9 and applied["after"]["ready_to_retire_fallback"] is True, applied["error"]
    assert applied["after"]["untagged"] == 4 and applied["after"]["convertible"] == 0
    again = json.loads(run_cli(live, "migrate", "--apply", "--json", support=support_bank).stdout)
    assert again["converted"] == []
    bad = run_cli(live, "migrate", "--apply", "--limit", "-1", support=support_bank)
    assert bad.returncode == 2 and "--limit" in bad.stderr and "Traceback" not in bad.stderr


# -- a server whose filter changed meaning, and how often apply reads the bank -------------------------
class _FilterIgnoringGateway:
    """Test double of a server whose untagged-documents filter lets a tagged document through."""

    def list_documents(self, bank_id, *, untagged=False, limit=100, offset=0):
        items = [{"id": "SUP-L-001", "tags": []}, {"id": "SUP-T-001", "tags": ["customer:ann-lee"]}]
        return {"items": items[offset : offset + limit], "total": len(items)}

    def document(self, bank_id, document_id):
        raise AssertionError("the listing alone must stop the migration")

    def retain(self, bank_id, records):
        raise AssertionError("nothing may be written")

    def close(self):
        pass


def test_a_filter_that_lets_tagged_documents_through_is_a_migration_error():
    with pytest.raises(migration.MigrationError, match="SUP-T-001"):
        migration.plan(_FilterIgnoringGateway(), "support", CUSTOMERS)
    with pytest.raises(migration.MigrationError):
        migration.apply(_FilterIgnoringGateway(), "support", CUSTOMERS)


def test_cli_reports_a_migration_error_with_exit_1_and_a_message(monkeypatch, capsys):
    from dashboard.cli import commands
    from dashboard.settings import Settings

    monkeypatch.setattr(commands, "open_gateway", lambda: (Settings(), _FilterIgnoringGateway()))
    for mode in ("--dry-run", "--apply"):
        assert cli_main(["migrate", mode, "--bank", "support"]) == 1  # returned: no exception escaped
        err = capsys.readouterr().err
        assert err.startswith("error: migration of support stopped: ") and "SUP-T-001" in err and "Traceback" not in err


def test_migration_page_shows_a_migration_error_as_a_plain_message(hindsight, bank_id, point_app, monkeypatch):
    point_app(hindsight.env(support=bank_id))

    def refuse(*_args, **_kwargs):
        raise migration.MigrationError("the filter no longer means 'untagged' [x](javascript:alert(1))")

    monkeypatch.setattr(migration, "plan", refuse)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("../support/pages/migration.py").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["The migration cannot go on:"]
    assert "the filter no longer means 'untagged' [x](javascript:alert(1))" in [t.value for t in at.text]


def test_apply_reads_the_bank_once_to_plan_and_once_to_measure(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, support_records())
    calls = []

    class Spy:  # the real gateway, with its list_documents calls written down
        def __getattr__(self, name):
            return getattr(hindsight.gateway, name)

        def list_documents(self, bank, **kwargs):
            calls.append(kwargs)
            return hindsight.gateway.list_documents(bank, **kwargs)

    report = migration.apply(Spy(), bank_id, CUSTOMERS)
    assert sorted(report.converted) == sorted(RELIABLE)
    scans = [c for c in calls if c.get("limit", 100) > 1]
    assert len(scans) == 2 and all(c["untagged"] for c in scans)  # before, after
    assert len(calls) == 4  # plus one document count (limit=1) each time
    assert (report.before.total, report.before.untagged, report.after.untagged) == (18, 13, 4)
