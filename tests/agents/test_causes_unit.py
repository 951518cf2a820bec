"""The cause rules of then != now on hand-made inputs: each kind named from what explains it, unknown otherwise."""

from datetime import UTC, datetime, timedelta

from dashboard.agents.causes import CauseInputs, CauseKind, DocumentNow, causes, config_changes
from dashboard.store.agent_runs import ResultRef

RECALLED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
BEFORE, AFTER = RECALLED - timedelta(days=30), RECALLED + timedelta(hours=2)


def _ref(doc: str, tags: list[str] | None = None) -> ResultRef:
    return ResultRef(id=doc, document_id=doc, tags=tags or [])


def _old(doc: str, **fields) -> DocumentNow:
    return DocumentNow(document_id=doc, created_at=BEFORE, updated_at=BEFORE, **fields)


def _kinds(appeared, left, documents, **inputs) -> dict[str, CauseKind]:
    inputs = CauseInputs(recalled_at=RECALLED, kept=5, documents={d.document_id: d for d in documents}, **inputs)
    found = causes(appeared, left, inputs)
    return {c.document_id: c.kind for c in found}


def test_each_change_of_the_document_itself_is_named():
    documents = [
        DocumentNow(document_id="new", created_at=AFTER, updated_at=AFTER),
        _old("curated", curation="invalidated by Lee on 2026-12-01: wrong (wrong, proposed by Dana)"),
        _old("retired", invalidated=True),
        _old("retagged", tags=["customer:b"]),
        _old("folded", observations=["obs-1"]),
        DocumentNow(document_id="moved", created_at=BEFORE, updated_at=AFTER, migrated=True, tags=["customer:a"]),
    ]
    left = [_ref("curated"), _ref("retired"), _ref("retagged", ["customer:a"]), _ref("folded"), _ref("moved")]
    assert _kinds([_ref("new")], left, documents) == {
        "new": CauseKind.RETAINED_AFTER,
        "curated": CauseKind.INVALIDATED,
        "retired": CauseKind.INVALIDATED,
        "retagged": CauseKind.TAGS_CHANGED,
        "folded": CauseKind.CONSOLIDATED,
        "moved": CauseKind.MIGRATED,
    }


def test_changes_around_the_document_are_named_and_only_the_unexplained_is_unknown():
    newer = DocumentNow(document_id="decision", created_at=AFTER, updated_at=AFTER, rank=1)
    documents = [newer, _old("pushed", rank=6), _old("risen", rank=3), DocumentNow(document_id="gone", stored=False)]
    kinds = _kinds([_ref("decision"), _ref("risen")], [_ref("pushed"), _ref("gone")], documents)
    assert kinds == {
        "decision": CauseKind.RETAINED_AFTER,
        "pushed": CauseKind.OUTRANKED,
        "risen": CauseKind.RANKING_SHIFTED,
        "gone": CauseKind.UNKNOWN,
    }
    # a retired precedent frees a place and shifts the scores: one still found drops below k, another rises
    documents = [_old("retired", curation="invalidated by Lee"), _old("dropped", rank=7), _old("rose", rank=2)]
    assert _kinds([_ref("rose")], [_ref("retired"), _ref("dropped")], documents) == {
        "retired": CauseKind.INVALIDATED,
        "dropped": CauseKind.RANKING_SHIFTED,
        "rose": CauseKind.RANKING_SHIFTED,
    }
    # nothing at all changed in the bank: a left document that is still found is unexplained
    assert _kinds([], [_ref("pushed")], [_old("pushed", rank=6)]) == {"pushed": CauseKind.UNKNOWN}


def test_a_config_change_explains_what_nothing_else_does_and_the_audit_log_switch_does_not():
    then = {"enable_graph_retrieval": True, "audit_log_enabled": False}
    now = {"enable_graph_retrieval": False, "audit_log_enabled": True}
    assert config_changes(then, now) == ["enable_graph_retrieval: True -> False"]
    assert config_changes(None, now) == []
    still_found = [_old("a", rank=9)]
    assert _kinds([], [_ref("a")], still_found, config_then=then, config_now=now) == {"a": CauseKind.CONFIG_CHANGED}
    audit_only = {**then, "audit_log_enabled": True}
    assert _kinds([], [_ref("a")], still_found, config_then=then, config_now=audit_only) == {"a": CauseKind.UNKNOWN}
    unrecorded = causes(
        [], [_ref("a")], CauseInputs(recalled_at=RECALLED, documents={"a": still_found[0]}, config_now=now)
    )
    assert unrecorded[0].sentence.endswith("the bank's config then was not recorded.")


def test_an_observation_that_appeared_or_left_is_named_as_consolidation():
    came = ResultRef(id="obs-new", kind="observation", sources=["SUP-L-001", "SUP-L-002"])
    went = ResultRef(id="obs-old", kind="observation")
    found = causes([came], [went], CauseInputs(recalled_at=RECALLED))
    assert [(c.document_id, c.change, c.kind) for c in found] == [
        ("obs-old", "left", CauseKind.CONSOLIDATED),
        ("obs-new", "appeared", CauseKind.CONSOLIDATED),
    ]
    assert "from SUP-L-001, SUP-L-002" in found[1].sentence
