"""Planted documents for "Why not this one?": each is lost at a known stage of the recall pipeline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboard.hindsight.wire import MemoryRecord

NORTH = "site:north"
BATTERY_QUERY = "forklift battery overheating during charging"
CONVEYOR_QUERY = "conveyor belt jam on the packing line"

BATTERY = [  # (document id, text, tagged with NORTH); the first says what the query says (first in every arm)
    ("bat-hit", "Forklift battery overheating during charging.", True),
    ("bat-near", "Forklift battery overheating reported twice; the charging station was rewired.", True),
    ("bat-third", "Battery charging for the forklift fleet runs hot on night shifts.", True),
    ("bat-untagged", "Forklift battery overheating during charging was fixed with a new cooling fan.", False),
    ("bat-weak", "Forklift tyres were replaced in the warehouse.", True),
    ("bat-weaker", "The warehouse moved its charging schedule to the mornings.", True),
    ("off-topic", "Quarterly tax filing for the Lisbon office was submitted on time.", True),
]
CONVEYOR = [  # the first says what the query says but is eight years old; the rest are recent
    ("conv-old", "Conveyor belt jam on the packing line.", True),
    ("conv-1", "The packing line conveyor belt jammed on a loose roller.", True),
    ("conv-2", "A belt jam halted the conveyor near packing station 3.", True),
    ("conv-3", "Packing line stopped: conveyor belt slipped off its pulley.", True),
    ("conv-4", "Conveyor jam cleared on the packing line after a carton got stuck.", True),
    ("conv-5", "Belt tension on the packing conveyor was adjusted.", True),
    ("conv-6", "The packing line conveyor motor overheated and jammed.", True),
    ("conv-7", "Conveyor belt on line 2 jammed during the packing rush.", True),
]


def planted_records(now: datetime | None = None) -> list[MemoryRecord]:
    """Every document dated a different number of days before `now` (no recency ties); conv-old eight years back."""
    now = now or datetime.now(UTC)
    records = []
    for day, (doc, text, tagged) in enumerate(BATTERY + CONVEYOR, start=1):
        when = now - timedelta(days=8 * 365 if doc == "conv-old" else day)
        records.append(MemoryRecord(document_id=doc, content=text, tags=[NORTH] if tagged else [], timestamp=when))
    return records
