import streamlit as st

from components.admission import render_coverage, render_plan, render_report
from dashboard.app import state
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.support import migration
from dashboard.support.models import Customer

REPORT_KEY = "migration_report"

st.title("Migration to tags")
st.caption(
    "Old support records carry no tag; ownership is only in their first sentence. A record whose marker names "
    "exactly one directory customer is re-retained under the SAME document id with that customer's tag, "
    "replacing the untagged copy in place. Everything else stays untagged, with the reason."
)

try:
    customers = load_rows(state.settings().customers_file, Customer, id_field="name")
except QueueFileError as exc:
    st.error("The customer directory could not be loaded:", icon=":material/error:")
    st.text(str(exc))
    st.stop()

settings = state.settings()
bank = settings.support_bank
st.text(f"Bank: {bank}   directory: {len(customers)} customers")

report = st.session_state.pop(REPORT_KEY, None)
if report is not None:
    render_report(report)
    render_coverage(report.before, "Coverage before the run", key="before")

try:
    plan = migration.plan(state.gateway(), bank, customers)
except HindsightError as exc:
    st.error(f"Hindsight at {settings.base_url} could not be read.", icon=":material/error:")
    st.text(f"{type(exc).__name__}: {exc}")
    st.stop()
except migration.MigrationError as exc:
    st.error("The migration cannot go on:", icon=":material/error:")
    st.text(str(exc))
    st.stop()

render_coverage(plan.coverage, "Coverage now" if report is None else "Coverage after the run", key="now")
st.subheader("Dry run: every untagged record, classified")
render_plan(plan)

with st.form("migration_apply"):
    st.text(f"Apply converts the {len(plan.reliable)} reliable record(s); it is idempotent and can be re-run after a failure.")
    batch = st.number_input("Batch size", min_value=1, max_value=100, value=10, key="migration_batch")
    confirmed = st.checkbox("I have reviewed the dry run above", key="migration_confirm")
    apply_clicked = st.form_submit_button("Apply migration", type="primary", disabled=bool(plan.directory_problems))

if apply_clicked:
    if not confirmed:
        st.error("Tick 'I have reviewed the dry run above' first.")
    else:
        try:
            result = migration.apply(state.gateway(), bank, customers, batch_size=int(batch))
        except migration.DirectoryError as exc:
            st.error("Refused: the directory is not safe to migrate against.")
            st.text(str(exc))
        except migration.MigrationError as exc:
            st.error("The migration stopped:", icon=":material/error:")
            st.text(str(exc))
        except HindsightError as exc:
            st.error(f"Hindsight at {settings.base_url} could not be read.", icon=":material/error:")
            st.text(f"{type(exc).__name__}: {exc}")
        else:
            state.invalidate_ticket_recalls()  # every customer's cached recall may change
            st.session_state[REPORT_KEY] = result
            st.rerun()
