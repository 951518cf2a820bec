"""An accounts-payable agent built with LangGraph and hindsight-langgraph that hands its cases to Recall Review and
waits for the human's decision (README.md). `pip install -e '.[agents]'` installs what it needs."""

from examples.ap_agent.graph import Agent, APState, memory_items, propose, query_for, tags_for

__all__ = ["APState", "Agent", "memory_items", "propose", "query_for", "tags_for"]
