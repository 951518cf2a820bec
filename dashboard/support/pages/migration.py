"""Migration to tags: the support bank's untagged documents, each classified by the ownership rule, and the
lead's confirmed run that tags the ones whose owner is proven."""

import streamlit as st

from components.safe_text import md
from components.status_banner import plain_error
from dashboard.app import access, resources
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.support import migration
from dashboard.support.models import Customer
from dashboard.support.pages import recalls as ticket_recalls
from dashboard.support.pages.admission_view import render_coverage, render_plan, render_report

REPORT_KEY = "migration_report"
CONFIRM = "I have checked the list above"


def apply(bank: str, customers: list[Customer], batch: int) -> None:
    """Run the migration (a lead, confirmed); its report shows after the rerun."""
    settings = resources.settings()
    try:
        result = migration.apply(
            resources.gateway(), bank, customers, batch_size=batch, retain=resources.signed_retain("migration")
        )
    except migration.DirectoryError as exc:
        st.error("Refused: the directory is not safe to migrate against.")
        st.text(str(exc))
    except migration.MigrationError as exc:
        st.error("The migration stopped:", icon=":material/error:")
        st.text(str(exc))
    except HindsightError as exc:
        st.error(f"Hindsight at {md(settings.base_url)} could not be read.", icon=":material/error:")
        st.text(plain_error(exc))
    else:
        ticket_recalls.migrated(bank)  # every customer's recall may change, on every instance
        st.session_state[REPORT_KEY] = result
        st.rerun()


def page() -> None:
    st.title("Migration to tags")
    st.caption(
        'Old support records carry no customer tag: only their first sentence ("Customer NAME contacted support.") '
        "says whose they are. Migrating stores each record whose first sentence names exactly one customer of the "
        "directory again, under the same document id, with that customer's tag: the untagged copy is replaced, not "
        "duplicated. Every other record stays untagged, with the reason."
    )
    settings = resources.settings()
    try:
        customers = load_rows(settings.customers_file, Customer, id_field="name")
    except QueueFileError as exc:
        st.error("The customer directory could not be loaded:", icon=":material/error:")
        st.text(str(exc))
        return
    bank = settings.support_bank
    st.text(f"Memory bank: {bank}   customer directory: {len(customers)} customers")
    report = st.session_state.pop(REPORT_KEY, None)
    if report is not None:
        render_report(report)
        render_coverage(report.before, "Documents before the run", key="before")
    try:
        plan = migration.plan(resources.gateway(), bank, customers)
    except HindsightError as exc:
        st.error(f"Hindsight at {md(settings.base_url)} could not be read.", icon=":material/error:")
        st.text(plain_error(exc))
        return
    except migration.MigrationError as exc:
        st.error("The migration cannot go on:", icon=":material/error:")
        st.text(str(exc))
        return
    render_coverage(plan.coverage, "Documents now" if report is None else "Documents after the run", key="now")
    st.subheader("Every untagged record, and whether it can be migrated")
    render_plan(plan)
    if not access.can("apply_migration"):
        st.info(
            f"Your role ({access.current_role()}) can read this list; migrating needs the lead role.",
            icon=":material/lock:",
        )
        return
    # Not a form: the button must grey out until the box is ticked, and a form's box is only read on submit.
    st.text(
        f"Migrating tags the {len(plan.reliable)} record(s) marked 'can be migrated'. It is safe to run again: a record "
        "already tagged is not touched twice, and a run that stopped is finished by running it again."
    )
    batch = st.number_input(
        "Records sent to Hindsight at a time", min_value=1, max_value=100, value=10, key="migration_batch"
    )
    confirmed = st.checkbox(CONFIRM, key="migration_confirm")
    blocked = "the customer directory is not safe to migrate against" if plan.directory_problems else None
    if not confirmed and not blocked:
        blocked = f"tick '{CONFIRM}' first"
    clicked = st.button(
        "Apply migration",
        type="primary",
        key="migration_apply",
        disabled=blocked is not None,
        help=f"Off: {blocked}." if blocked else None,
    )
    if blocked:  # a greyed-out button says why
        st.caption(f"Apply migration is off: {blocked}.")
    if clicked and access.permitted("apply_migration"):
        apply(bank, customers, int(batch))


page()
