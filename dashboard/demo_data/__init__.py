"""Demo data shipped with the project: the finance and support banks' history and open queues."""

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
PRECEDENTS = DEMO_DIR / "finance_precedents.json"
EXCEPTIONS = DEMO_DIR / "exceptions.csv"
SUPPORT_HISTORY = DEMO_DIR / "support_history.json"
TICKETS = DEMO_DIR / "tickets.csv"
CUSTOMERS = DEMO_DIR / "customers.json"
