"""A customer's legacy (untagged) history beside a ticket's recall, and the migration of it. No Streamlit.

Once a customer has one tagged record, the ticket recall takes the tagged path and never consults
their untagged history. `not_consulted` says which of those records the deterministic ownership rule
would admit for the customer (they are theirs, and silently left out), and which of them the migration
can tag (its plan classifies them as reliable for exactly this customer).

The writes go through the migration's own code path (`migration.apply`, re-planned from the server,
same document ids, replaced in place), narrowed to one customer or one record:

- `migrate_customer`: every reliable legacy record of one customer;
- `tag_for_customer`: one record, and only if the migration rule gives it to that customer; otherwise
  `TagRefused` says why (another customer's marker, no marker, already tagged, ...).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from dashboard.support import migration
from dashboard.support.admission import judge
from dashboard.support.customers import display_name, name_key
from dashboard.support.migration import Classification, MigrationPlan, MigrationReport
from dashboard.support.models import Customer
from dashboard.support.recall import TicketRecall


class TagRefused(migration.MigrationError):
    """The record cannot be tagged for this customer; the message says why, for a person."""


class NotConsulted(BaseModel):
    """The customer's legacy records the tagged recall left out."""

    customer: str
    records: list[Classification] = Field(default_factory=list)  # the ownership rule admits them for the customer
    migratable: list[Classification] = Field(default_factory=list)  # of those, what the migration would tag

    @property
    def count(self) -> int:
        return len(self.records)

    def sentence(self) -> str:
        n = self.count
        noun = "legacy record" if n == 1 else "legacy records"
        verb = "was" if n == 1 else "were"
        return f"{n} {noun} of this customer {verb} not consulted because a tagged record exists: migrate them."

    @property
    def not_migratable(self) -> list[Classification]:
        ids = {c.document_id for c in self.migratable}
        return [c for c in self.records if c.document_id not in ids]


def owned_by(customer: str):
    """Selects the plan's reliable records whose single directory owner is `customer`."""
    key = name_key(customer)
    return lambda c: c.status == "reliable" and c.customer is not None and name_key(c.customer) == key


def not_consulted(recall: TicketRecall, plan: MigrationPlan) -> NotConsulted | None:
    """None unless the recall took the tagged path; otherwise the customer's untagged records it skipped."""
    if recall.path != "tagged":
        return None
    mine = owned_by(recall.customer)
    records = [c for c in plan.reliable + plan.failed if judge(c.text, [], recall.customer).admitted]
    records.sort(key=lambda c: c.document_id)
    return NotConsulted(customer=recall.customer, records=records, migratable=[c for c in records if mine(c)])


def tag_refusal(plan: MigrationPlan, customer: str, document_id: str | None, tags: Sequence[str] = ()) -> str | None:
    """Why `document_id` cannot be tagged for `customer` under the migration rule (None: it can)."""
    if not document_id:
        return "it has no document id, so it cannot be replaced in place"
    if plan.directory_problems:
        return "the customer directory is not safe to migrate against: " + "; ".join(plan.directory_problems)
    found = next((c for c in plan.reliable + plan.failed if c.document_id == document_id), None)
    if found is None:
        shown = f" ({', '.join(tags)})" if tags else ""
        return f"it is not an untagged legacy record{shown}: the migration only tags untagged records"
    if found.status == "failed":
        return f"the migration rule cannot prove its owner: {found.reason}"
    if not owned_by(customer)(found):
        return f"it belongs to {found.customer}, not {display_name(customer)}: {found.reason}"
    return None


def migrate_customer(
    gateway,
    bank_id: str,
    customers: Sequence[Customer],
    customer: str,
    *,
    batch_size: int = migration.DEFAULT_BATCH,
    retain=None,
) -> MigrationReport:
    """Tag every reliable legacy record of one customer (the migration, narrowed to them; `retain` as migration.apply)."""
    name = display_name(customer)
    return migration.apply(
        gateway,
        bank_id,
        customers,
        batch_size=batch_size,
        only=owned_by(name),
        scope=f"{name}'s legacy records",
        retain=retain,
    )


def tag_for_customer(
    gateway,
    bank_id: str,
    customers: Sequence[Customer],
    customer: str,
    document_id: str | None,
    tags: Sequence[str] = (),
    retain=None,
) -> MigrationReport:
    """Tag one record for `customer`, only if the migration rule gives it to them; TagRefused otherwise."""
    refusal = tag_refusal(migration.plan(gateway, bank_id, customers), customer, document_id, tags)
    if refusal is not None:
        raise TagRefused(f"Not tagged: {refusal}.")
    mine = owned_by(customer)
    return migration.apply(
        gateway,
        bank_id,
        customers,
        only=lambda c: c.document_id == document_id and mine(c),
        scope=f"record {document_id}",
        retain=retain,
    )


class RecordRow(BaseModel):
    """One record a ticket's page shows, for the per-record actions (flag it, tag it for this customer)."""

    key: str  # document id; an observation's (or a document-less memory's) memory id
    document_id: str | None = None
    where: str
    reason: str
    tags: list[str] = Field(default_factory=list)
    text: str


def ticket_records(recall: TicketRecall, skipped: NotConsulted | None = None) -> list[RecordRow]:
    """Every record the ticket's page shows, once, in page order: used, found but not used, not consulted."""
    rows: dict[str, RecordRow] = {}
    groups = [
        ("used: tagged history", recall.tagged),
        ("used: old record", recall.legacy_admitted),
        ("found, not used", recall.legacy_rejected),
    ]
    groups += [("observation: " + ("used" if o.admitted else "excluded"), [o]) for o in recall.observations]
    for where, items in groups:
        for e in items:
            rows.setdefault(
                e.ref,
                RecordRow(key=e.ref, document_id=e.document_id, where=where, reason=e.reason, tags=e.tags, text=e.text),
            )
    for c in skipped.records if skipped else []:
        key = c.document_id
        rows.setdefault(
            key,
            RecordRow(
                key=key, document_id=c.document_id, where="not consulted: old record", reason=c.reason, text=c.text
            ),
        )
    return list(rows.values())
