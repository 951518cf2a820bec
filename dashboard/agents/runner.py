"""Run a reference agent on a case, match its recalls to the audit log, and record the run.

`seed_agent_runs` gives a fresh demo real agent recalls: the naive variants first on a few cases (the
incidents a reviewer should see), then the reviewed agents over both queues (support drafts are not
retained, so the demo's legacy customers keep showing the fallback). A case and variant that
already has a run is not run again, so seeding twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from dashboard.agents.audit_sync import resolve_audit_ids
from dashboard.agents.cause_inputs import recall_config
from dashboard.agents.finance_agent import run_finance_agent
from dashboard.agents.support_agent import run_support_agent
from dashboard.finance.kind import FINANCE
from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.write_facts import asker
from dashboard.origin.provenance import Provenance
from dashboard.review.queue_kind import QueueKind
from dashboard.store.agent_runs import AgentRun, AgentRunStore
from dashboard.support.kind import SUPPORT
from dashboard.support.models import Ticket
from dashboard.trust.origin import OriginOf

# Demo cases for the naive variants: a vendor whose exact precedents a richer vendor crowds out, a
# customer with only legacy history, a customer with no history at all.
NAIVE_DEMO_EXCEPTIONS = ("E-1002", "E-1012")
NAIVE_DEMO_TICKETS = ("T-2004", "T-2010")


def _record(gateway: HindsightGateway, store: AgentRunStore, run: AgentRun) -> AgentRun:
    """Match the run's recalls to the audit log and keep it, with the bank's config then (a later change explains
    why recall returns something else now)."""
    run = resolve_audit_ids(gateway, store, run)
    run = run.model_copy(update={"output": {**run.output, "bank_config": recall_config(gateway, run.bank_id)}})
    store.record_run(run)
    return run


def run_exception(
    gateway: HindsightGateway,
    store: AgentRunStore,
    bank_id: str,
    case: ExceptionCase,
    variant: str,
    origin: OriginOf | None = None,
) -> AgentRun:
    """`origin`: the check of a record's signature; by default the review store's that `store` is part of."""
    origin = origin or Provenance(store.engine).origin
    return _record(
        gateway,
        store,
        run_finance_agent(gateway.recall, bank_id, case, variant, origin=origin, ask_server=asker(gateway, bank_id)),
    )


def run_ticket(
    gateway: HindsightGateway,
    store: AgentRunStore,
    bank_id: str,
    ticket: Ticket,
    variant: str,
    retain: bool = True,
    origin: OriginOf | None = None,
) -> AgentRun:
    """`origin`: the check of a record's signature; by default the review store's that `store` is part of."""
    run = run_support_agent(
        gateway.recall,
        gateway.retain if retain else None,
        bank_id,
        ticket,
        variant,
        read_document=gateway.document,
        origin=origin or Provenance(store.engine).origin,
    )
    return _record(gateway, store, run)


# The kinds with a reference agent (case kind -> (its agent's name, a run of it)); a kind without one is left out.
AGENTS: dict[str, tuple[str, Callable[..., AgentRun]]] = {
    FINANCE.name: ("finance", run_exception),
    # Drafts only: retained answers would turn the demo's legacy customers into tagged ones.
    SUPPORT.name: ("support", partial(run_ticket, retain=False)),
}
NAIVE_DEMO = {FINANCE.name: NAIVE_DEMO_EXCEPTIONS, SUPPORT.name: NAIVE_DEMO_TICKETS}


def seed_agent_runs(
    gateway: HindsightGateway,
    store: AgentRunStore,
    queues: Sequence[tuple[QueueKind, str, Sequence]],
    log: Callable[[str], None] = print,
    origin: OriginOf | None = None,
) -> dict[str, int]:
    """`queues`: (kind, its bank, its cases) of every registered kind; the kinds with a reference agent (AGENTS) run."""
    queues = [(kind, bank, cases) for kind, bank, cases in queues if kind.name in AGENTS]
    done = {(r.case_kind, r.case_id, r.variant) for _kind, bank, _cases in queues for r in store.runs(bank_id=bank)}
    counts = {AGENTS[kind.name][0]: 0 for kind, _bank, _cases in queues}
    plan = [
        (kind, bank, case, "naive")
        for kind, bank, cases in queues
        for case in cases
        if case.id in NAIVE_DEMO.get(kind.name, ())
    ]
    plan += [(kind, bank, case, "reviewed") for kind, bank, cases in queues for case in cases]
    for kind, bank, case, variant in plan:
        if (kind.name, case.id, variant) not in done:
            agent, run = AGENTS[kind.name]
            run(gateway, store, bank, case, variant, origin=origin)
            counts[agent] += 1
    log("agent runs: " + ", ".join(f"{n} {agent}" for agent, n in counts.items()) + " recorded")
    return counts
