"""Decisions and workflow: the decision service and what surrounds a decision (approvals, second review, claims,
curation, labels, the figures), over the review store (dashboard/store) and naming no queue kind. No Streamlit."""
