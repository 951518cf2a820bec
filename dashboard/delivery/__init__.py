"""What leaves the review store: decisions retained into Hindsight by the outbox and its worker, and the webhooks told of each final decision. No Streamlit."""
