"""Queue files: all-or-nothing loading with errors that name the file, row and field."""

import pytest

from dashboard import demo_data
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import MAX_FILE_BYTES, QueueFileError, load_rows, parse_rows, shared_rows
from dashboard.support.models import Customer, Ticket

HEADER = "id,vendor_code,vendor_name,exception_type,invoice,po,invoice_amount,po_amount,description,opened_on\n"
GOOD = "E-1,V01,Northwind,price_variance,INV-1,PO-1,105.00,100.00,Billed over PO,2026-11-02\n"


def test_demo_queues_load():
    assert len(load_rows(demo_data.EXCEPTIONS, ExceptionCase)) >= 17
    assert len(load_rows(demo_data.TICKETS, Ticket)) >= 12
    assert len(load_rows(demo_data.CUSTOMERS, Customer, id_field="name")) >= 8


@pytest.mark.parametrize(
    "content, expected",
    [
        (
            HEADER + GOOD + GOOD.replace("E-1", "E-2").replace("price_variance", "late_fee"),
            "row 2 (line 3), field 'exception_type'",
        ),
        (HEADER + GOOD.replace("105.00", "lots"), "row 1 (line 2), field 'invoice_amount'"),
        (HEADER + GOOD.replace(",V01,", ",,"), "row 1 (line 2), field 'vendor_code'"),
        (HEADER + GOOD + GOOD, "row 2 (line 3), field 'id': duplicate value 'E-1' (first on row 1)"),
        (HEADER.replace("po,", ""), "field 'po': required column is missing"),
        (HEADER.rstrip("\n") + ",colour\n", "field 'colour': unexpected column"),
        (HEADER + GOOD.rstrip("\n") + ",extra\n", "row 1 (line 2): more cells than columns"),
        ("", "file is empty"),
        (HEADER, "file has a header but no rows"),
    ],
)
def test_malformed_exception_queue_names_row_and_field(tmp_path, content, expected):
    path = tmp_path / "exceptions.csv"
    path.write_text(content)
    with pytest.raises(QueueFileError) as err:
        load_rows(path, ExceptionCase)
    assert expected in str(err.value)
    assert "exceptions.csv" in str(err.value) and "nothing imported" in str(err.value)


def test_a_queue_file_read_again_unchanged_is_not_validated_again_and_a_changed_one_is(tmp_path, monkeypatch):
    path = tmp_path / "exceptions.csv"
    path.write_text(HEADER + GOOD)
    validated = []
    validate = ExceptionCase.model_validate
    monkeypatch.setattr(
        ExceptionCase,
        "model_validate",
        classmethod(lambda cls, cells: validated.append(cells["id"]) or validate(cells)),
    )

    first, again = load_rows(path, ExceptionCase), load_rows(path, ExceptionCase)
    path.write_text(HEADER + GOOD.replace("105.00", "106.00"))  # same size, same name: only the bytes differ
    changed = load_rows(path, ExceptionCase)

    assert validated == ["E-1", "E-1"] and first == again and first is not again  # each caller has its own list
    assert [c.invoice_amount for c in changed] == [106.0]
    shared = shared_rows(path, ExceptionCase)
    assert shared is shared_rows(path, ExceptionCase) and list(shared) == changed  # one tuple while the bytes stay
    path.write_text(HEADER + GOOD)
    assert shared_rows(path, ExceptionCase) is not shared
    with pytest.raises(ValueError):  # the models are shared between runs, so nothing may change them
        first[0].invoice_amount = 1.0


def test_a_queue_of_100000_exceptions_loads_and_a_file_over_the_limit_is_refused(tmp_path):
    from benches import data as bench_data

    path = bench_data.write_cases_csv(tmp_path / "exceptions.csv", bench_data.cases(100_000))
    assert len(load_rows(path, ExceptionCase)) == 100_000
    path.write_bytes(path.read_bytes()[:200] + b" " * (MAX_FILE_BYTES - 199))
    with pytest.raises(QueueFileError) as err:
        load_rows(path, ExceptionCase)
    assert f"file is {MAX_FILE_BYTES + 1:,} bytes; the limit is {MAX_FILE_BYTES:,}" in str(err.value)


def test_one_bad_row_imports_nothing():
    data = (HEADER + GOOD + GOOD.replace("E-1", "E-2").replace("100.00", "-5")).encode()
    with pytest.raises(QueueFileError) as err:
        parse_rows("q.csv", data, ExceptionCase)
    assert [(p.row, p.field) for p in err.value.problems] == [(2, "po_amount")]


def test_non_utf8_names_the_line():
    with pytest.raises(QueueFileError, match="not UTF-8: byte .* on line 2"):
        parse_rows("q.csv", (HEADER + "E-1,V01,Caf\xe9").encode("latin-1"), ExceptionCase)


def test_json_queue_errors_name_the_item():
    data = (
        b'[{"id": "T-1", "customer": "Ann Lee", "issue": "x", "drafted_response": "y", "opened_on": "2026-11-02"}, 3]'
    )
    with pytest.raises(QueueFileError, match="row 2: expected an object"):
        parse_rows("tickets.json", data, Ticket)
