"""A table of bad inputs and the message each one gets: clear, naming the field, never a server error."""

import pytest
from pydantic import ValidationError

from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.errors import HindsightRequestRejected, HindsightUnavailable
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryRecord
from dashboard.processes import free_port
from dashboard.support.customers import customer_tag

CASE = dict(
    id="E-1",
    vendor_code="V01",
    vendor_name="Northwind",
    exception_type="price_variance",
    invoice="INV-1",
    po="PO-1",
    invoice_amount=105.0,
    po_amount=100.0,
    description="Billed over PO",
    opened_on="2026-11-02",
)

RECALL_INPUTS = [
    # (what, query, tags, expected message)
    ("empty query", "", None, "query: needs at least one letter or digit"),
    ("emoji-only query", "\U0001f600" * 50, None, "query: needs at least one letter or digit"),
    ("over-long query", "p" * 6000, None, "query: 6,000 characters; the limit is 5,000"),
    ("tag with a newline", "price variance", ["vendor:V01\n"], "tags[1]: 'vendor:V01\\n' must be 1-200 characters"),
    ("empty tag", "price variance", ["vendor:V01", " "], "tags[2]: ' ' must be 1-200 characters"),
    ("over-long tag", "price variance", ["v" * 201], "tags[1]:"),
]


@pytest.mark.parametrize("what, query, tags, expected", RECALL_INPUTS, ids=[r[0] for r in RECALL_INPUTS])
def test_recall_inputs_are_refused_before_any_request(what, query, tags, expected):
    # Nothing listens on this port: a RequestRejected (not Unavailable) proves nothing was sent.
    gateway = HindsightGateway(f"http://127.0.0.1:{free_port()}")
    try:
        with pytest.raises(HindsightRequestRejected) as err:
            gateway.recall("bank", query, tags=tags)
        assert expected in str(err.value)
    finally:
        gateway.close()


MODEL_INPUTS = [
    (
        "vendor code with a space",
        lambda: ExceptionCase(**{**CASE, "vendor_code": "V 01"}),
        "vendor_code",
        "must be 1-20 of A-Z",
    ),
    (
        "unknown exception type",
        lambda: ExceptionCase(**{**CASE, "exception_type": "late_fee"}),
        "exception_type",
        "price_variance",
    ),
    (
        "missing vendor",
        lambda: ExceptionCase(**{k: v for k, v in CASE.items() if k != "vendor_code"}),
        "vendor_code",
        "Field required",
    ),
    ("negative amount", lambda: ExceptionCase(**{**CASE, "po_amount": -1}), "po_amount", "greater than or equal to 0"),
    (
        "tag with a tab",
        lambda: MemoryRecord(document_id="d", content="x", tags=["a\tb"]),
        "tags",
        "no tabs or newlines",
    ),
]


@pytest.mark.parametrize("what, build, field, expected", MODEL_INPUTS, ids=[r[0] for r in MODEL_INPUTS])
def test_model_inputs_name_the_field(what, build, field, expected):
    with pytest.raises(ValidationError) as err:
        build()
    (error,) = err.value.errors()
    assert error["loc"][0] == field and expected in str(err.value)


def test_customer_name_without_letters_or_digits():
    with pytest.raises(ValueError, match="has no letters or digits to make a tag from"):
        customer_tag("+++ ()")


def test_server_refusals_carry_the_servers_message(hindsight):
    with pytest.raises(HindsightRequestRejected, match="Bank 'no-such-bank' not found"):
        hindsight.gateway.recall("no-such-bank", "price variance")


def test_unreachable_server_is_named():
    port = free_port()
    gateway = HindsightGateway(f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(HindsightUnavailable, match=f"Hindsight at http://127.0.0.1:{port} is unreachable"):
            gateway.recall("bank", "price variance")
    finally:
        gateway.close()


# -- arecall makes the same checks as recall ---------------------------------------------------------
BAD_RECALLS = [
    ({"query": "   "}, "query: needs at least one letter or digit"),
    ({"query": "?!"}, "query: needs at least one letter or digit"),
    ({"query": "charged twice", "tags": ["customer:ann-lee\x00"]}, "tags[1]"),
    ({"query": "charged twice", "tags": ["customer:ann-lee", ""]}, "tags[2]"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_RECALLS)
def test_arecall_refuses_bad_input_before_sending(kwargs, message):
    # Nothing listens on port 9: only a check made before sending can answer "rejected" rather than "unreachable".
    gw = HindsightGateway("http://127.0.0.1:9", timeout=2)
    try:
        [result] = gw.recall_many([lambda: gw.arecall("bank", **kwargs)])
    finally:
        gw.close()
    assert isinstance(result, HindsightRequestRejected) and message in str(result)


@pytest.mark.parametrize(("kwargs", "message"), BAD_RECALLS)
def test_arecall_refuses_bad_input_on_the_real_server_as_recall_does(hindsight, bank_id, kwargs, message):
    gw = hindsight.gateway
    [through_arecall] = gw.recall_many([lambda: gw.arecall(bank_id, **kwargs)])
    with pytest.raises(HindsightRequestRejected) as through_recall:
        gw.recall(bank_id, **kwargs)
    assert str(through_arecall) == str(through_recall.value) and message in str(through_arecall)
    [fine] = gw.recall_many([lambda: gw.arecall(bank_id, "  charged twice  ", tags=["customer:ann-lee"])])
    assert fine.results == []  # a good request still goes through (the bank is empty)
