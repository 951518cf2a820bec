"""`python -m dashboard labels-export --json|--csv`: every relevance label reviewers gave on evidence cards, with
its provenance (who, in which role, when, on which recall request)."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from dashboard.cli.registry import command, print_json

COLUMNS = (
    "id",
    "case_kind",
    "case_id",
    "bank_id",
    "document_id",
    "label",
    "reviewer",
    "role",
    "created_at",
    "query",
    "tags",
    "tags_match",
)


def _export_args(parser: argparse.ArgumentParser) -> None:
    form = parser.add_mutually_exclusive_group(required=True)
    form.add_argument("--json", action="store_true", help="a JSON list, one object per label")
    form.add_argument("--csv", action="store_true", help="CSV with a header row (tags as a JSON list)")


@command(
    "labels-export",
    "every relevance label on an evidence card, with reviewer, role, time and recall request",
    _export_args,
)
def run_labels_export(args: argparse.Namespace) -> int:
    from dashboard.review.relevance import RelevanceLabels
    from dashboard.settings import load_settings
    from dashboard.store.db import make_engine

    settings = load_settings()
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        rows = [label.model_dump(mode="json", include=set(COLUMNS)) for label in RelevanceLabels(engine).history()]
    finally:
        engine.dispose()
    if args.json:
        print_json(rows)
        return 0
    writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows({**row, "tags": json.dumps(row["tags"])} for row in rows)
    return 0
