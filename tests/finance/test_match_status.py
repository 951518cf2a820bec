"""A case's match status: 2-way or 3-way from what the queue file gives, each tolerance judged in plain words,
and what the file does not give said to be unknown, never guessed."""

from dashboard.finance.matching import match_status
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import parse_rows

HEADER = "id,vendor_code,vendor_name,exception_type,invoice,po,invoice_amount,po_amount,description,opened_on"


def _case(**optional: str) -> ExceptionCase:
    """One case read from a CSV queue file, with the optional match columns given (an empty cell: not given)."""
    names = ",".join(optional)
    cells = ",".join(optional.values())
    text = f"{HEADER}{',' + names if names else ''}\nE-1,V01,Northwind,quantity_mismatch,INV-1,PO-1,1050,1000,Bolts,2026-11-02{',' + cells if cells else ''}\n"
    (case,) = parse_rows("queue.csv", text.encode(), ExceptionCase)
    return case


def test_without_receipt_or_tolerance_it_is_a_2_way_match_and_says_what_is_unknown():
    status = match_status(_case())
    assert (status.kind, status.failed, status.headline) == ("2-way", [], "2-way match")
    assert status.lines == [
        "Invoice against PO: 1,050.00 against 1,000.00, 5.0% above; no tolerance in the queue file, so within or outside it is not known.",
        "No receipt in the queue file (received quantity or amount): a 2-way match only.",
    ]
    assert match_status(_case(received_amount="", tolerance_pct="")).kind == "2-way"  # empty cells are not given


def test_a_3_way_match_names_each_tolerance_that_failed():
    status = match_status(
        _case(invoiced_quantity="100", received_quantity="90", received_amount="1050", tolerance_pct="2")
    )
    assert status.kind == "3-way" and status.failed == ["price", "quantity"]
    assert status.headline == "3-way match: the price and quantity tolerances failed"
    assert (
        status.lines[1]
        == "Invoice against goods received: 1,050.00 against 1,050.00, the same; the tolerance is 2%: the receipt amount tolerance holds."
    )
    assert status.lines[2].endswith("11.1% above; the tolerance is 2%: the quantity tolerance failed.")
    assert match_status(_case(received_quantity="90", tolerance_pct="5")).lines[1] == (
        "Received 90.00 units; the invoiced quantity is not in the queue file."
    )
    assert match_status(_case(tolerance_pct="5")).failed == []  # 5.0% is within a 5% tolerance
