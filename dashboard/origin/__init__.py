"""Who wrote a memory record: this deployment's signatures on what it retains, and leads' vouches for records of unknown origin. No Streamlit."""
