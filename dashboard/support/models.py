"""Support domain models: tickets, the customer directory and seeded interactions."""

from __future__ import annotations

from datetime import date

from pydantic import ConfigDict, Field

from dashboard.strict import StrictModel


class Customer(StrictModel):
    model_config = ConfigDict(frozen=True)  # shared by every run that reads the same file (load_rows)

    name: str = Field(min_length=1, max_length=120)
    segment: str = ""


class Ticket(StrictModel):
    model_config = ConfigDict(frozen=True)  # shared by every run that reads the same queue file (load_rows)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")  # limited at import
    customer: str = Field(min_length=1, max_length=120)
    issue: str = Field(min_length=1, max_length=4000)
    drafted_response: str = Field(min_length=1, max_length=8000)
    opened_on: date


class SupportInteraction(StrictModel):
    """A past support interaction, as seeded; `tagged` False means the legacy untagged format."""

    id: str
    customer: str
    text: str
    tagged: bool
    note: str = ""  # what the record is in the demo (e.g. a decoy), for people reading the data
