"""Reason codes per exception type, each with its label (RECALL_REVIEW_REASON_CODES): the rule on plain data, and
the Exceptions page's form offering each type its own list (AppTest, the real server)."""

from __future__ import annotations

import json

import pytest

from components.decision_form import field_keys
from dashboard.finance.decisions import REASON_CODES, exception_decision, precedent_record, reasons_for
from dashboard.finance.policy import Recommendation
from dashboard.store.errors import DecisionInputError
from tests.helpers import demo_case, open_page

CONFIGURED = {
    "price_variance": {
        "PRICE_AGREED": "Price agreed with the vendor",
        "SUPPLIER_INDEX": "Indexed to the supplier's list",
    },
    "default": {"OTHER": "Other (explain in the note)", "NEEDS_APPROVER": "Needs a budget holder"},
}
REC = Recommendation(action="reject", confidence=0.9, cited=[], rationale="r", policy="precedent")
PRICE, RECEIPT = demo_case("E-1002"), demo_case("E-1013")  # a price variance, a missing receipt


def test_each_type_gets_its_list_else_the_default_else_the_built_in_one():
    assert reasons_for("price_variance", CONFIGURED) == CONFIGURED["price_variance"]
    assert reasons_for("missing_receipt", CONFIGURED) == CONFIGURED["default"]
    assert reasons_for("missing_receipt", {}) == REASON_CODES


def test_a_code_outside_the_types_list_is_refused_and_the_memory_carries_the_configured_label():
    reasons = reasons_for(PRICE.exception_type, CONFIGURED)
    with pytest.raises(
        DecisionInputError, match="Unknown reason code 'NEEDS_APPROVER'; choose one of PRICE_AGREED, SUPPLIER_INDEX"
    ):
        exception_decision(
            PRICE,
            REC,
            reviewer="Dana",
            authenticated=False,
            action="override",
            outcome="approve",
            reason_code="NEEDS_APPROVER",
            reasons=reasons,
        )
    decision = exception_decision(
        PRICE,
        REC,
        reviewer="Dana",
        authenticated=False,
        action="override",
        outcome="approve",
        reason_code="SUPPLIER_INDEX",
        reasons=reasons,
    )
    assert (
        "Reason: Indexed to the supplier's list (SUPPLIER_INDEX)."
        in precedent_record(PRICE, decision, REC, reasons).content
    )


def test_the_form_offers_each_exception_type_its_configured_codes_and_labels(
    hindsight, point_app, demo_banks_read_only
):
    env = hindsight.env(finance=demo_banks_read_only.finance, support=demo_banks_read_only.support)
    point_app({**env, "RECALL_REVIEW_REASON_CODES": json.dumps(CONFIGURED)})
    for case, expected in ((PRICE, CONFIGURED["price_variance"]), (RECEIPT, CONFIGURED["default"])):
        at = open_page("../finance/pages/exceptions.py", case=case.id)
        options = at.radio(key=field_keys(case.id)["reason"]).options
        assert options == [f"{code}: {label}" for code, label in expected.items()], case.id
