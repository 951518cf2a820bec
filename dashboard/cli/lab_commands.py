"""Fusion lab commands: `evidence-bench` (labelled evidence sets)."""

from __future__ import annotations

import argparse
import sys

from dashboard.cli.registry import command, input_error, open_gateway, print_json
from dashboard.hindsight.errors import HindsightError


def _evidence_args(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--set", dest="set_file", help="labelled set, JSON Lines: query, tags?, tags_match?, expected_document_ids"
    )
    source.add_argument(
        "--finance", action="store_true", help="the finance exception queue (relevant = same vendor and type)"
    )
    parser.add_argument("--bank", help="bank to recall from (default: the finance bank with --finance)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--no-grid", action="store_true", help="skip the what-if grid")
    parser.add_argument("--json", action="store_true")


@command(
    "evidence-bench",
    "how often labelled evidence reaches the returned top k, per arm, and a what-if grid",
    _evidence_args,
)
def run_evidence_bench(args: argparse.Namespace) -> int:
    from dashboard.lab.finance_set import demo_finance_cases
    from dashboard.traces.evidence import EvidenceSetError, bench, load_cases

    if not 1 <= args.k <= 100:
        return input_error("--k", "must be from 1 to 100")
    settings, gateway = open_gateway()
    try:
        cases = demo_finance_cases(settings.exceptions_file) if args.finance else load_cases(args.set_file)
    except (EvidenceSetError, ValueError) as exc:
        gateway.close()
        return input_error("--set" if args.set_file else "--finance", str(exc))
    bank = args.bank or (settings.finance_bank if args.finance else None)
    if not bank:
        gateway.close()
        return input_error("--bank", "is required with --set")
    try:
        report = bench(gateway, bank, cases, k=args.k, grid=not args.no_grid)
    except HindsightError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        gateway.close()
    if args.json:
        print_json(report)
        return 0
    print(f"{report['cases']} cases on bank {bank}: evidence in the returned top {args.k} for {report['evidence_at_k']} "
          f"({report['evidence_rate']:.0%})")  # fmt: skip
    print(f"{'arm':<10}{'in list':>9}{'in pool':>9}{'in top k':>10}{'share of top k':>16}")
    for arm, row in report["per_arm"].items():
        print(f"{arm:<10}{row['in_list']:>9}{row['in_pool']:>9}{row['in_top_k']:>10}{row['share_of_top_k']:>16.0%}")
    for row in report.get("grid", [])[:10]:
        weights = " ".join(f"{s}={w:g}" for s, w in row["weights"].items())
        print(
            f"  {row['evidence_at_k']:>3}  {weights}  cap={row['cap'] or 'none'}  min_bm25={row['min_bm25'] or 'none'}"
        )
    for failed in report["failed"]:
        print(f"failed: {failed['query']}: {failed['error']}", file=sys.stderr)
    return 0
