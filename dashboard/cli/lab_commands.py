"""Fusion lab commands: `evidence-bench` (labelled evidence sets), `ab-compare` (A/B on the same queue) and
`why-not` (where a document that should have been recalled was lost)."""

from __future__ import annotations

import argparse
import sys

from pydantic import ValidationError

from dashboard.cli.registry import bank_arg, command, input_error, open_gateway, print_json, query_arg
from dashboard.traces.replay import DEFAULT_RERANKER_MAX_CANDIDATES
from dashboard.traces.request import TAGS_MATCH_VALUES


def _evidence_args(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--set", dest="set_file", help="labelled set, JSON Lines: query, tags?, tags_match?, expected_document_ids"
    )
    source.add_argument(
        "--finance", action="store_true", help="the finance exception queue (relevant = same vendor and type)"
    )
    source.add_argument(
        "--from-reviews",
        action="store_true",
        help="the reviewers' relevance labels: each labelled case's recall request, relevant = most reviewers say so",
    )
    parser.add_argument(
        "--bank", help="bank to recall from (default: the finance bank with --finance or --from-reviews)"
    )
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
    bank = args.bank or (settings.finance_bank if args.finance or args.from_reviews else None)
    labelled = None
    try:
        if args.from_reviews:
            cases, labelled = _reviewed_set(settings, bank)
        else:
            cases = demo_finance_cases(settings.exceptions_file) if args.finance else load_cases(args.set_file)
    except (EvidenceSetError, ValueError) as exc:
        gateway.close()
        return input_error("--set" if args.set_file else "--finance", str(exc))
    if labelled is not None and not cases:
        gateway.close()
        return input_error(
            "--from-reviews", f"no case of bank {bank} has a document most of its reviewers label relevant"
        )
    if not bank:
        gateway.close()
        return input_error("--bank", "is required with --set")
    try:
        report = bench(gateway, bank, cases, k=args.k, grid=not args.no_grid)
    finally:
        gateway.close()
    if labelled is not None:
        report["labelled_set"] = [
            {
                "case": c.case_id,
                "kind": c.case_kind,
                "request_from": c.source,
                "query": c.query,
                "tags": c.tags,
                "tags_match": c.tags_match,
                "expected_document_ids": c.relevant,
                "labels": c.labels,
            }
            for c in labelled
        ]
    if args.json:
        print_json(report)
        return 0
    for c in labelled or []:
        print(f"{c.case_id}: request from the {c.source}, {len(c.relevant)} relevant document(s)")
    print(
        f"{report['cases']} cases on bank {bank}: evidence in the returned top {args.k} for {report['evidence_at_k']} "
        f"({report['evidence_rate']:.0%}); precision@{args.k} {report['precision_at_k']:.2f}, MRR {report['mrr']:.2f}"
    )
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


def _reviewed_set(settings, bank: str):
    """The reviewers' labels of `bank` as a labelled set: (bench cases, the labelled cases they are)."""
    from dashboard.agents.labelled_cases import from_store, review_set
    from dashboard.review.relevance import RelevanceLabels
    from dashboard.store.agent_runs import AgentRunStore
    from dashboard.store.db import make_engine

    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        return review_set(from_store(RelevanceLabels(engine), AgentRunStore(engine), bank))
    finally:
        engine.dispose()


def _ab_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--a",
        default="",
        metavar="WHATIF",
        help="A as a what-if (e.g. graph=0,cap=20,min_bm25=1.5); default: the server as it is",
    )
    b = parser.add_mutually_exclusive_group(required=True)
    b.add_argument(
        "--b-whatif",
        metavar="WHATIF",
        help="B as a what-if: arm=weight (semantic, bm25, graph, temporal), cap=N, min_bm25=X",
    )
    b.add_argument(
        "--b-bank-config",
        metavar="NAME=VALUE,...",
        help="B as a bank configuration on clones, e.g. enable_graph_retrieval=false",
    )
    b.add_argument("--b-url", metavar="URL", help="B as another Hindsight server")
    parser.add_argument("--json", action="store_true")


def _bank_config(spec: str) -> dict[str, bool | int]:
    config: dict[str, bool | int] = {}
    for part in spec.split(","):
        name, sep, value = (p.strip() for p in part.partition("="))
        if not sep or not name:
            raise ValueError(f"{part.strip()!r}: expected name=value")
        low = value.lower()
        config[name] = low == "true" if low in ("true", "false") else int(value)
    return config


@command("ab-compare", "the finance queue and the tickets under A and B, per case, with a summary line", _ab_args)
def run_ab_compare(args: argparse.Namespace) -> int:
    from dashboard.finance.models import ExceptionCase
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.lab.ab import Variant, compare
    from dashboard.lab.whatif import WhatIf
    from dashboard.queue_files import QueueFileError, load_rows
    from dashboard.support.models import Ticket

    try:
        a = Variant(name="a", kind="whatif", whatif=WhatIf.parse(args.a)) if args.a else Variant(name="a")
    except ValueError as exc:
        return input_error("--a", str(exc))
    try:
        if args.b_whatif is not None:
            b = Variant(name="b", kind="whatif", whatif=WhatIf.parse(args.b_whatif))
        elif args.b_bank_config is not None:
            b = Variant(name="b", kind="bank_config", bank_config=_bank_config(args.b_bank_config))
        else:
            b = Variant(name="b", kind="url", url=args.b_url.strip())
    except ValueError as exc:
        flag = (
            "--b-whatif"
            if args.b_whatif is not None
            else "--b-bank-config"
            if args.b_bank_config is not None
            else "--b-url"
        )
        return input_error(flag, str(exc))
    settings, gateway = open_gateway()
    try:
        cases, tickets = load_rows(settings.exceptions_file, ExceptionCase), load_rows(settings.tickets_file, Ticket)

        def open_other(url: str) -> HindsightGateway:  # our API key goes to the configured server only
            return HindsightGateway(url, settings.api_key if url.rstrip("/") == settings.base_url else None)

        report = compare(gateway, settings.finance_bank, settings.support_bank, cases, tickets, a, b, open_other)
    except (QueueFileError, ValueError) as exc:
        return input_error("A/B", str(exc))
    finally:
        gateway.close()
    if args.json:
        print_json(report.as_json())
        return 0
    print(report.summary())
    if report.prediction_checks:
        print(
            f"check: the default prediction equals the server's list for {sum(report.prediction_checks)} of "
            f"{len(report.prediction_checks)} recalls"
        )
    for d in report.diffs:
        if d.changed or d.error:
            row = d.row()
            print(
                f"  {row['case']:<10} exact +[{row['exact gained']}] -[{row['exact lost']}]  "
                f"recommendation {row['recommendation A']} -> {row['recommendation B']}  "
                f"legacy +[{row['legacy admitted gained']}] -[{row['legacy admitted lost']}]  {row['error']}"
            )
    return 0


def _why_not_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bank", required=True, type=bank_arg)
    parser.add_argument("--query", required=True, type=query_arg)
    parser.add_argument("--tags", nargs="+", action="extend", default=[], metavar="T", help="the recall's tags")
    parser.add_argument("--tags-match", default="any", choices=TAGS_MATCH_VALUES)
    parser.add_argument("--k", type=int, default=10, help="documents the caller takes (default 10)")
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--document", required=True, help="the document that should have been recalled")
    parser.add_argument(
        "--per-source-cap",
        type=int,
        default=0,
        metavar="N",
        help="judge as a server with HINDSIGHT_API_RECALL_MAX_CANDIDATES_PER_SOURCE=N (0 = off)",
    )
    parser.add_argument(
        "--reranker-candidates",
        type=int,
        default=DEFAULT_RERANKER_MAX_CANDIDATES,
        metavar="N",
        help="judge as a server with HINDSIGHT_API_RERANKER_MAX_CANDIDATES=N",
    )
    parser.add_argument(
        "--queue",
        action="store_true",
        help="also count the cases of the queue the fix would alter (one traced recall per case)",
    )
    parser.add_argument("--json", action="store_true")


@command(
    "why-not",
    "where a document that should have been recalled was lost, and the smallest change that brings it in",
    _why_not_args,
)
def run_why_not(args: argparse.Namespace) -> int:
    from dashboard.finance.models import ExceptionCase
    from dashboard.hindsight.errors import HindsightRequestRejected
    from dashboard.hindsight.gateway import check_tags
    from dashboard.lab.fix_reach import cases_altered
    from dashboard.queue_files import load_rows
    from dashboard.support.models import Ticket
    from dashboard.traces.request import TraceRequest
    from dashboard.traces.scoring import server_knobs
    from dashboard.traces.why_not import explain, load_document

    if not 1 <= args.k <= 100:
        return input_error("--k", "must be from 1 to 100")
    if args.per_source_cap < 0:
        return input_error("--per-source-cap", "must be 0 (off) or more")
    if args.reranker_candidates < 1:
        return input_error("--reranker-candidates", "must be 1 or more")
    if not args.document.strip():
        return input_error("--document", "must not be empty")
    try:
        check_tags(args.tags)
    except HindsightRequestRejected as exc:
        return input_error("--tags", str(exc))
    try:
        request = TraceRequest(
            bank=args.bank,
            query=args.query,
            tags=tuple(args.tags),
            tags_match=args.tags_match,
            max_tokens=args.max_tokens,
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        return input_error("--" + str(problem["loc"][0]).replace("_", "-"), problem["msg"])
    knobs = server_knobs(per_source_cap=args.per_source_cap, reranker_max_candidates=args.reranker_candidates)
    settings, gateway = open_gateway()
    try:
        document = load_document(gateway, args.bank, args.document.strip())
        if document is None:
            return input_error("--document", f"bank {args.bank} has no document {args.document.strip()!r}")
        answer = explain(gateway, request, document, args.k, knobs)
        altered = None
        if args.queue:
            cases, tickets = (
                load_rows(settings.exceptions_file, ExceptionCase),
                load_rows(settings.tickets_file, Ticket),
            )
            altered = cases_altered(
                gateway, settings.finance_bank, settings.support_bank, cases, tickets, knobs, answer
            )
    finally:
        gateway.close()
    if args.json:
        print_json({**answer.as_json(), **({} if altered is None else {"queue_cases_altered": altered})})
        return 0
    from dashboard.lab.suggestions import plain_classifier, suggestions

    print(answer.sentence)
    print(f"fix: {answer.fix}")
    for suggestion in suggestions(answer, plain_classifier):
        print(f"it {suggestion.lets_in.sentence()}")
    if altered is not None:
        print(f"it would alter {len(altered)} case(s) of the queue" + (f": {', '.join(altered)}" if altered else ""))
    return 0
