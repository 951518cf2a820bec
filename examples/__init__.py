"""Examples of agents that hand cases to Recall Review (see each one's README.md)."""
