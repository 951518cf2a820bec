"""The exception queue as its page shows it, filtered and sorted, with its ids and its vendors to filter by: kept
between runs while made from the same objects (app/kept_while_same.py), and worked out for the default filters
before the app serves (serve.read_queues), so no reviewer waits for it (~0.15 s at 100,000 cases)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dashboard.app.kept_while_same import kept_while_same
from dashboard.finance import queue as exception_queue
from dashboard.finance.models import ExceptionCase
from dashboard.review.figures import held_statuses

NO_FILTERS: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())  # vendors, types, statuses


def shown_queue(
    cases: Sequence[ExceptionCase],
    decided: Mapping,
    held: Mapping,
    blind: Mapping,
    filters=NO_FILTERS,
    sort: str = exception_queue.DEFAULT_SORT,
) -> tuple[list[ExceptionCase], list[str]]:
    """(shown cases, their ids) for these filters and sort; `cases`: the queue file's shared rows; `decided`, `held`,
    `blind`: the states and the held decisions, read only by a status filter."""
    vendors, types, statuses = filters

    def select():
        shown = exception_queue.select(
            cases, decided, vendors=vendors, types=types, statuses=statuses, sort=sort, held=held_statuses(held, blind)
        )
        return shown, [c.id for c in shown]

    return kept_while_same.get(
        (cases, decided, held, blind) if statuses else (cases,), ("shown", filters, sort), select
    )


def vendor_choices(cases: Sequence[ExceptionCase]) -> list[str]:
    return kept_while_same.get((cases,), "vendors", lambda: sorted({c.vendor_code for c in cases}))
