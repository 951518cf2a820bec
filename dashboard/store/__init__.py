"""The review store: its engine, tables and migrations, and the records they keep (a decision, a person, an agent's part, the agents' runs), read and delivered by the rooms above. No Streamlit."""
