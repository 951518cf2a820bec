import streamlit as st

from components.overview import render_banks, render_queues, render_server
from dashboard.app import audit, case_figures, navigation, resources
from dashboard.app.my_tokens import render_my_tokens

st.title("Recall Review")
queues = [kind.title.lower() for kind in resources.kinds()]  # each kind's own title: "finance exceptions"
listed = f"{', '.join(queues[:-1])} and {queues[-1]}" if len(queues) > 1 else queues[0]
st.caption(
    f"Check what agents recalled from Hindsight before they act: {listed}, "
    "with the evidence, why each memory was admitted, and a human decision retained back into memory."
)

with st.container(horizontal=True):
    for kind in resources.kinds():
        st.page_link(navigation.queue_page(kind), label=f"Review {kind.title.lower()}", icon=kind.icon)
    st.page_link("views/overview.py", label="Overview for stakeholders", icon=":material/monitoring:")
    st.page_link("views/traces.py", label="Explore a recall trace", icon=":material/troubleshoot:")
    st.page_link("views/glossary.py", label="Glossary", icon=":material/menu_book:")

render_my_tokens()

overview = resources.home_overview()
render_server(overview.server)
render_banks(overview.banks)  # the whole width: no cell cut at 1440 wide
# the same figures as the Overview's and the Audit log's, counted by the same function
render_queues(
    overview.queues,
    {q.name: case_figures.queue_figures(q.bank_id, q.kind, q.ids) for q in overview.queues if not q.error},
)

st.subheader("Audit log: what the agents actually recalled")
settings = resources.settings()
off = [bank for bank in settings.banks if not audit.audit_log_on(bank)]
for bank in settings.banks:
    st.text(f"{bank}: audit log {'off' if bank in off else 'on'}")
audit.show_reading(settings.banks)  # a new store's first catch-up with the logs, while it runs
if off:
    st.text("Without it, each case shows what recall returns today, not what the agent saw when it acted.")
    with st.expander("How to turn it on"):
        st.text(
            "Per bank: update_bank_config(bank, audit_log_enabled=True); for the whole server: "
            "HINDSIGHT_API_AUDIT_LOG_ENABLED=true. Cost: the server stores every recall's full request and response "
            "(set HINDSIGHT_API_AUDIT_LOG_RETENTION_DAYS to bound it)."
        )
