"""A decision says its outcomes in its kind's words (ReviewerDecision.words), wherever it is read back; one recorded
before decisions carried them keeps the words it was shown with."""

from datetime import UTC, datetime
from types import SimpleNamespace

from dashboard.hindsight.wire import MemoryRecord
from dashboard.kinds import proposed
from dashboard.reporting.headline import HEADLINE_START
from dashboard.review.decisions import Proposal
from dashboard.store.decision import (
    EvidenceSnapshot,
    ReviewerDecision,
    Shown,
    changed_since_shown,
    conflict_escalation,
    decision_summary,
)

WORDS = {
    "credit": "accept the dispute: ask for a credit note",
    "reject": "reject the dispute: pay in full",
    "escalate": "escalate to procurement",
}


def decision(**fields) -> ReviewerDecision:
    base = dict(
        case_id="D-1",
        case_kind="dispute",
        reviewer="Pat",
        authenticated=False,
        outcome="reject",
        overridden=True,
        reason_code="OTHER",
        agent_recommendation="credit",
        decided_at=datetime(2026, 12, 1, tzinfo=UTC),
    )
    return ReviewerDecision(**{**base, **fields})


def test_an_override_is_said_in_its_kinds_words_and_an_older_decision_in_those_it_was_made_with():
    assert decision_summary(decision(words=WORDS)).startswith(
        "Outcome: reject the dispute: pay in full, an override of the agent's accept the dispute: ask for a credit note."
    )
    older = decision(case_kind="exception", outcome="reject", agent_recommendation="approve")  # no words kept
    assert decision_summary(older).startswith("Outcome: reject, an override of the agent's approve for payment.")


def test_a_changed_recommendation_and_an_escalated_conflict_use_the_kinds_words():
    evidence = EvidenceSnapshot(available=True)
    then, now = (Shown.of("D-1", evidence.model_copy(update={"recommendation": r})) for r in ("credit", "reject"))
    assert (
        "(accept the dispute: ask for a credit note then, reject the dispute: pay in full now)"
        in changed_since_shown(then, now, WORDS)
    )
    mine = decision(words=WORDS, action_words=WORDS["reject"])
    escalated = conflict_escalation(mine, decision(reviewer="Bo", outcome="credit", words=WORDS), datetime.now(UTC))
    assert decision_summary(escalated).startswith(
        "Outcome: escalate to procurement, an override of the agent's accept the"
    )


def test_a_kind_not_on_the_base_has_its_words_put_on_its_decisions():
    bare = decision()  # a kind that set no words of its own
    kind = SimpleNamespace(
        outcomes=WORDS,
        propose=lambda *args: Proposal(decision=bare, record=MemoryRecord(document_id="d", content="x"), scope="s"),
    )
    assert proposed(kind, None, None, None, {}).decision.words == WORDS


def test_the_overview_headline_is_recognised_whatever_the_kinds():
    assert HEADLINE_START.match("30 cases (18 exceptions, 12 tickets): 3 decided, 27 open.")
    assert HEADLINE_START.match("4 cases (0 exceptions, 0 tickets, 4 disputes): 1 decided, 3 open.")
