"""The registry of queue kinds: every shared room that handles cases loops over these, and names none of them.

A kind is a `review.queue_kind.QueueKind` object, named here by "package.module:ATTRIBUTE": the built-in ones below,
then RECALL_REVIEW_KINDS (a kind that lives outside this package, e.g. the tests' purchase-order disputes).
docs/adding-a-queue-kind.md walks through adding one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import import_module
from pathlib import Path

from dashboard.delivery.webhooks import WebhookEvents, WebhookTarget
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.case_queue import CaseQueue
from dashboard.review.decisions import Proposal
from dashboard.review.queue_kind import QueueKind
from dashboard.settings import LEGACY_QUEUE_FIELDS, Settings
from dashboard.store.db import make_engine

BUILT_IN = (
    "dashboard.finance.kind:FINANCE",
    "dashboard.support.kind:SUPPORT",
)


class KindError(ValueError):
    """A registry entry that does not name a usable kind; the message names the entry."""


@cache
def _load(entry: str) -> QueueKind:
    module, _, attribute = entry.partition(":")
    try:
        kind = getattr(import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise KindError(f"RECALL_REVIEW_KINDS: {entry!r} cannot be loaded ({exc})") from None
    if not isinstance(kind, QueueKind):
        raise KindError(f"RECALL_REVIEW_KINDS: {entry!r} is not a queue kind (review/queue_kind.py: QueueKind)")
    return kind


def registered(settings: Settings) -> tuple[QueueKind, ...]:
    """Every kind, built-in first, each name and key once."""
    kinds = tuple(_load(entry) for entry in dict.fromkeys((*BUILT_IN, *settings.extra_kinds)))
    for attribute in ("name", "key", "url_path"):
        values = [getattr(k, attribute) for k in kinds]
        if len(set(values)) != len(values):
            raise KindError(f"RECALL_REVIEW_KINDS: two kinds share the {attribute} {max(values, key=values.count)!r}")
    return kinds


def by_key(settings: Settings, key: str) -> QueueKind:
    """The kind `decide --kind KEY` (or RECALL_REVIEW_QUEUES) names; KindError lists the ones there are."""
    for kind in registered(settings):
        if kind.key == key:
            return kind
    raise KindError(f"unknown queue kind {key!r}; one of {', '.join(k.key for k in registered(settings))}")


def configured(settings: Settings) -> Settings:
    """`settings` with every registered kind's queue filled in (its bank and cases file, its own defaults where unset):
    what the app and the CLI use, so `settings.banks` names every kind's bank and nothing else."""
    queues = dict(settings.queues)
    for kind in registered(settings):
        given = settings.queue(kind.key)
        if kind.key not in LEGACY_QUEUE_FIELDS:  # the built-in kinds' live in their older fields
            queues[kind.key] = given.model_copy(
                update={"bank": given.bank or kind.default_bank, "cases": given.cases or kind.default_cases}
            )
    return settings.model_copy(update={"queues": queues})


def proposed(kind: QueueKind, case, view, choice, reasons) -> Proposal:
    """`kind.propose(...)`, its decision carrying the kind's outcome words (ReviewerDecision.words) when the kind did not
    set them: every room then says its outcomes as its buttons do, whatever base the kind is built on."""
    proposal = kind.propose(case, view, choice, reasons)
    if proposal.decision.words:
        return proposal
    return replace(proposal, decision=proposal.decision.model_copy(update={"words": dict(kind.outcomes)}))


def seed_of(kind: QueueKind) -> Sequence[MemoryRecord]:
    """The records `python -m dashboard seed` retains into the kind's bank: its `seed` where it declares one."""
    return tuple(getattr(kind, "seed", ()) or ())


def bank_of(settings: Settings, kind: QueueKind) -> str:
    return settings.queue(kind.key).bank or kind.default_bank


def webhook_targets(settings: Settings) -> dict[tuple[str, str], WebhookTarget]:
    """(bank, case kind) -> the webhook its final decisions go to, for every registered kind that has one (docs/webhooks.md)."""
    targets = {}
    for kind in registered(settings):
        queue = settings.queue(kind.key)
        if queue.webhook_url and queue.webhook_secret:
            targets[(bank_of(settings, kind), kind.name)] = WebhookTarget(
                kind.key, queue.webhook_url, queue.webhook_secret.get_secret_value(), queue.webhook_allow_private
            )
    return targets


def hold_webhook_position(settings: Settings, engine) -> None:
    """Fix where the kinds' webhook events start (delivery.webhooks.WebhookEvents.hold_position) before a process records
    anything: the app at its start, and every command that opens the review store."""
    targets = webhook_targets(settings)
    if targets:
        WebhookEvents(engine, targets=targets).hold_position()


def handed_in(settings: Settings) -> CaseQueue:
    """The cases agents and imports handed in to the configured review store (one per process and store)."""
    return _case_queue(settings.store_url, settings.data_dir)


@cache
def _case_queue(store_url: str | None, data_dir: Path) -> CaseQueue:
    return CaseQueue(make_engine(store_url, data_dir))


_merged: dict[
    tuple, tuple[Sequence, tuple, tuple]
] = {}  # (kind, store) -> (the file's rows, the handed-in ones, the queue)


def cases_of(settings: Settings, kind: QueueKind) -> Sequence:
    """The kind's queue: its configured file's rows (queue_files.QueueFileError names the file, the row and the field),
    then the cases handed in to the review store whose ids the file does not hold, oldest first. The same object while
    neither changed: what a page derives from the queue is kept while it is (app/kept_while_same.py)."""
    path = settings.queue(kind.key).cases or kind.default_cases
    from_file = kind.load(path) if path is not None else ()
    stored = handed_in(settings).cases(kind.name)
    if not stored:
        return from_file
    key = (kind.name, settings.store_url, settings.data_dir)
    kept = _merged.get(key)
    if kept is None or kept[0] is not from_file or kept[1] is not stored:
        in_file = {case.id for case in from_file}
        # handed-in cases are only ever added: what was validated is kept when the new tuple extends the kept one
        grew = kept is not None and kept[0] is from_file and kept[1] and stored[len(kept[1]) - 1] is kept[1][-1]
        known = len(kept[1]) if grew else 0
        extra = tuple(kind.model.model_validate(case.fields) for case in stored[known:] if case.case_id not in in_file)
        kept = (from_file, stored, (*(kept[2] if known else from_file), *extra))
        _merged[key] = kept
    return kept[2]
