"""The contract every kind declared on the tag-scoped base (dashboard/review/tag_scoped.py) keeps, against the real
server: the tests' disputes, and a fifth kind declared in under 60 lines (tests/kinds/returns). Its recall (exact
evidence holding every scope tag, the broader flagged not relevant), an override refused without a reason, its
decision retained and recalled as a reviewer's precedent; on its page, registered by one line: the trace link that
opens focused on the case, and the decision flash, the Audit log, the export and the Overview in its own words."""

import inspect
import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from dashboard.cli.seed import seed_bank
from dashboard.delivery.outbox import Outbox
from dashboard.reporting.audit_export import audit_rows
from dashboard.review.decisions import decision_service
from dashboard.review.queue_kind import Choice
from dashboard.store.decision import decision_summary
from dashboard.store.errors import InputError
from tests.conftest import APP, PROVEN, SIGNING_SECRET, seeded
from tests.helpers import open_page, texts
from tests.kinds.disputes import DISPUTES
from tests.kinds.returns import RETURNS

KINDS = {"disputes": ("tests.kinds.disputes:DISPUTES", DISPUTES), "returns": ("tests.kinds.returns:RETURNS", RETURNS)}


def test_the_fifth_kind_is_declared_in_under_60_lines():
    assert len(Path(inspect.getfile(type(RETURNS))).read_text().splitlines()) < 60


def seeded_bank(server, kind) -> str:
    bank = f"{kind.key}-{uuid.uuid4().hex[:8]}"
    seed_bank(server.gateway, bank, list(kind.seed), sign=seeded)
    server.settle(bank)
    return bank


def overriding(kind, view) -> str:
    return next(o for o in kind.outcomes if o != view.recommendation)


@pytest.mark.parametrize("key", KINDS)
def test_a_kind_recalls_on_its_tags_refuses_an_unexplained_override_and_recalls_its_decision(key, live, tmp_path):
    kind = KINDS[key][1]
    bank = seeded_bank(live, kind)
    case = kind.load(kind.default_cases)[0]
    tags, _ = kind.focus(case)
    view = kind.recall(live.gateway.recall, bank, case, origin=PROVEN)
    assert view.exact and all(e.relevant and set(tags) <= set(e.tags) for e in view.exact), view.exact
    assert view.broader and not any(e.relevant or set(tags) <= set(e.tags) for e in view.broader), view.broader
    assert not {e.ref for e in view.exact} & {e.ref for e in view.broader}  # pass 2 only fills the rest of k
    assert view.recommendation in kind.outcomes

    outcome = overriding(kind, view)
    choice = Choice(reviewer="Pat", outcome=outcome, decided_at=datetime.now(UTC), shown=view.shown(), base_revision=0)
    with pytest.raises(InputError, match="an override needs a reason code"):
        kind.propose(case, view, choice)
    proposal = kind.propose(
        case, view, choice.model_copy(update={"reason_code": "OTHER", "note": "Seen on the photos."})
    )
    service = decision_service(Outbox(tmp_path / "store.sqlite3", signing_key=SIGNING_SECRET), live.gateway.retain)
    done = service.decide(bank, "reviewer", proposal)
    assert done.delivered

    # in the kind's own words wherever it is read back
    said, recommended = kind.outcomes[outcome], kind.outcomes[view.recommendation]
    assert decision_summary(done.stored.decision).startswith(
        f"Outcome: {said}, an override of the agent's {recommended}."
    )
    row = next(r for r in audit_rows(service.outbox.history(), {}, {}) if r.case_id == case.id)
    assert (row.decision, row.agent_recommendation_words) == (said, recommended)
    assert row.decided_on_evidence.endswith(f"; recommended {recommended}")

    live.settle(bank)
    twin = kind.model.model_validate({**case.model_dump(), "id": f"{case.id}-2"})  # the next case of the same scope
    again = kind.recall(live.gateway.recall, bank, twin, origin=PROVEN)
    assert kind.document_id(case.id) in [e.ref for e in again.exact]
    assert again.recommendation == outcome and kind.document_id(case.id) in again.rationale  # a proven reviewer's


@pytest.mark.parametrize("key", KINDS)
def test_its_page_traces_the_case_and_every_page_says_its_words(key, hindsight, point_app, tmp_path):
    line, kind = KINDS[key]
    bank = seeded_bank(hindsight, kind)
    (tmp_path / "none.csv").write_text("id\n")
    point_app(
        {
            **hindsight.env(finance=bank + "-fin", support=bank + "-sup"),
            "RECALL_REVIEW_KINDS": line,
            "RECALL_REVIEW_QUEUES": json.dumps({kind.key: {"bank": bank}}),
            "RECALL_REVIEW_EXCEPTIONS_FILE": str(tmp_path / "none.csv"),
            "RECALL_REVIEW_TICKETS_FILE": str(tmp_path / "none.csv"),
        }
    )
    page = os.path.relpath(kind.page, Path(APP).parent)
    case = kind.load(kind.default_cases)[0]
    at = open_page(page)
    trace = next(link for link in at.page_link if link.label.startswith("Trace the exact recall"))
    params = {name: values[-1] for name, values in parse_qs(trace.proto.query_string).items()}
    assert (params["case"], params["of"], params["bank"]) == (case.id, kind.key, bank)
    traced = open_page("views/traces.py", **params)
    back = next(link for link in traced.page_link if link.value.startswith("Back to case"))
    assert back.proto.page.endswith(kind.url_path) and back.proto.query_string == f"case={case.id}"

    view = kind.recall(hindsight.gateway.recall, bank, case, origin=PROVEN)
    outcome = overriding(kind, view)
    said, recommended = kind.outcomes[outcome], kind.outcomes[view.recommendation]
    at.text_input(key=f"{kind.key}_reviewer").input("Pat Buyer")
    at.radio(key=f"{kind.key}_outcome_{case.id}").set_value(outcome)
    at.selectbox(key=f"{kind.key}_reason_{case.id}").set_value("OTHER")
    at.text_area(key=f"{kind.key}_note_{case.id}").input("Seen on the photos.")
    next(b for b in at.button if b.label == "Record the decision").click().run()
    assert not at.exception, at.exception
    assert any(s.value.startswith(f"{case.id} recorded: {said} (decision #") for s in at.success), [
        s.value for s in at.success
    ]
    assert f"Outcome: {said}, an override of the agent's {recommended}. Reason: OTHER" in texts(at)

    audit = texts(open_page("views/audit.py"))
    assert f"{case.id}: {said} (overrode the agent's {recommended}, reason OTHER), by Pat Buyer" in audit
    overview = open_page("views/overview.py")
    assert not overview.exception, overview.exception
    assert f"{kind.title}: overrides by {next(iter(kind.scope_tags))} and reason code" in [
        s.value for s in overview.subheader
    ]
    assert not [s.value for s in overview.subheader if "by vendor" in s.value]  # no other kind's panel
