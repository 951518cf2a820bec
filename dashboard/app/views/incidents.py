"""Incidents: what went wrong in what the agents recalled and did, from the recorded runs and the audit log."""

import pandas as pd
import streamlit as st

from components.then_now import request_of
from components.trace_link import trace_link
from components.when import local_time
from dashboard.agents.incidents import KIND_LABELS, found_figures, incidents_count, naive_words
from dashboard.app import audit, resources

st.title("Incidents")
st.caption(
    "Where an agent's evidence or answer went wrong: found in the agents' recorded runs and in what Hindsight's audit log says their recalls returned."
)

settings = resources.settings()
banks = (settings.finance_bank, settings.support_bank)
for bank in banks:
    if not audit.audit_log_on(bank):
        st.warning(
            "The audit log is off for a configured bank: its incidents rest on the agents' own records.",
            icon=":material/visibility_off:",
        )
        with st.expander("How to turn it on"):
            st.text(f"{bank}: update_bank_config(bank, audit_log_enabled=True); each recall's response is then stored.")
found = audit.incidents(banks, fresh=st.button("Check again", icon=":material/refresh:"))
audit.show_reading(banks)  # a new store's first catch-up with the audit log: how far it has got
kinds = st.multiselect("Kind", list(KIND_LABELS), format_func=KIND_LABELS.get, key="incident_kinds")
shown = [i for i in found if not kinds or i.kind in kinds]
st.text(incidents_count(shown, found))
if naive := naive_words(found_figures(shown)):  # the demo's deliberate failures, said as such
    st.text(f"Where they come from: {naive}.")
if not shown:
    st.stop()


KINDS = {kind.name: kind for kind in resources.kinds()}


def _link(incident) -> str | None:
    """The case on its kind's page: the address and the parameter the kind names."""
    kind = KINDS.get(incident.case_kind)
    return f"/{kind.url_path}?{getattr(kind, 'case_param', 'case')}={incident.case_id}" if kind else None


st.subheader("What happened")
for i in shown:  # read in full, wrapped: a grid cell would cut the summary
    st.text(f"{i.case_id}: {i.label} ({i.agent} agent, {i.variant}), {local_time(i.at)}\n{i.summary}")

st.subheader("Look into one")
frame = pd.DataFrame(
    [
        {
            "when": i.at,
            "kind": i.label,
            "case": _link(i),
            "agent": f"{i.agent}/{i.variant}",
            "records": ", ".join(i.records),
            "used in answer": ", ".join(i.used_in_answer),
        }
        for i in shown
    ]
)
event = st.dataframe(
    frame,
    hide_index=True,
    width="stretch",
    key="incidents_table",
    on_select="rerun",
    selection_mode="single-row",
    column_config={
        "case": st.column_config.LinkColumn(display_text=r"=(.*)$"),
        "when": st.column_config.DatetimeColumn(format="D MMM YYYY, HH:mm"),
    },
)
st.caption("Select an incident to see what the agent recalled for it.")
if event.selection.rows:
    incident = shown[event.selection.rows[0]]
    run = next(
        (
            r
            for r in resources.agent_runs().runs(incident.case_kind, incident.case_id, incident.bank_id)
            if r.run_id == incident.run_id
        ),
        None,
    )
    st.text(incident.summary)
    st.text(
        f"Records involved: {', '.join(incident.records) or 'none'}\nUsed in the answer: {', '.join(incident.used_in_answer) or 'none'}"
    )
    with st.expander("How these were recalled"):
        for recall in run.recalls if run else []:
            st.text(
                f"{recall.label}: {recall.tags_match or 'any'} on {recall.tags or 'no tags (bank-wide)'}; audit entry {recall.audit_id or 'none'}"
            )
            trace_link(request_of(incident.bank_id, recall), label="Trace (this request, recalled again now)")
