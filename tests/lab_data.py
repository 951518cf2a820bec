"""Dated memories spread over years, for checking the predicted returned order on a real server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboard.hindsight.wire import MemoryRecord

VENDORS = ["Acme", "Borealis", "Cobalt", "Dunmore", "Elbrus", "Fjord"]
EVENTS = [
    "delivered the order {n} days late and the warehouse logged the delay",
    "sent an invoice with a unit price above the contract price by {n} percent",
    "renewed the service contract for {n} months after a review",
    "was audited and {n} findings about invoice approvals were raised",
    "shipped a partial delivery; {n} pallets were missing on arrival",
    "asked for early payment with a {n} percent discount",
]

# Queries with and without time expressions (the temporal arm runs only on the dated ones).
QUERIES = [
    "which vendor delivered late",
    "invoice unit price above the contract price",
    "late delivery in March 2021",
    "contract renewal in 2019",
    "audit findings about invoice approvals in 2024",
    "missing pallets on a partial delivery last year",
    "Cobalt early payment discount",
    "which invoices had a price above the contract this year",
    "what happened with Borealis between June 2022 and August 2023",
]


def dated_records(count: int = 150, now: datetime | None = None, years: float = 8.0) -> list[MemoryRecord]:
    """`count` memories over the `years` before `now`, denser towards now (a third within the last
    year, where recency matters), the oldest `years` back (where it has reached its floor)."""
    now = now or datetime.now(UTC)
    records = []
    for i in range(count):
        vendor, event = VENDORS[i % len(VENDORS)], EVENTS[(i // len(VENDORS)) % len(EVENTS)]
        when = now - timedelta(days=365 * years * (i / (count - 1)) ** 2 + 1, hours=i % 7)
        text = f"{vendor} {event.format(n=3 + i % 17)} ({when:%B %Y})."
        records.append(
            MemoryRecord(document_id=f"lab-{i:04d}", content=text, timestamp=when, tags=[f"vendor:{vendor.lower()}"])
        )
    return records
