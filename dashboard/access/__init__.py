"""Who may do what: roles, approval limits and the agents' API tokens. No Streamlit."""
