"""`queue import FILE --kind K` (all or nothing, idempotent, a conflict named by its row) and `token create|revoke|list`
on a scratch review store."""

from __future__ import annotations

import json

import pytest

from dashboard.cli import main
from dashboard.finance.kind import FINANCE
from dashboard.kinds import cases_of, configured, handed_in
from dashboard.settings import load_settings

HEADER = "id,vendor_code,vendor_name,exception_type,invoice,po,invoice_amount,po_amount,description,opened_on"


def row(case_id: str, amount: str = "110") -> str:
    return f"{case_id},V02,Globex,price_variance,INV-1,PO-1,{amount},100,Brackets billed above the PO price.,2026-01-05"


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    return tmp_path


def test_queue_import_is_all_or_nothing_and_idempotent(store, capsys):
    cases = store / "cases.csv"
    cases.write_text("\n".join([HEADER, row("E-9201"), row("E-9202")]) + "\n")
    assert main(["queue", "import", str(cases), "--kind", "finance"]) == 0
    assert "2 exceptions added, 0 already" in capsys.readouterr().out
    assert main(["queue", "import", str(cases), "--kind", "finance"]) == 0
    assert "0 exceptions added, 2 already" in capsys.readouterr().out
    settings = configured(load_settings())
    queue = cases_of(settings, FINANCE)
    assert [c.id for c in queue][-2:] == ["E-9201", "E-9202"] and cases_of(
        settings, FINANCE
    ) is queue  # kept while unchanged

    changed = store / "changed.csv"
    changed.write_text("\n".join([HEADER, row("E-9203"), row("E-9202", amount="999")]) + "\n")
    assert main(["queue", "import", str(changed), "--kind", "finance"]) == 2
    err = capsys.readouterr().err
    assert "nothing imported, row 2: E-9202 was handed in already with other values: invoice_amount differ" in err
    assert handed_in(settings).get("exception", "E-9203") is None  # the good row did not land either

    bad = store / "bad.csv"
    bad.write_text("\n".join([HEADER, row("E-9204", amount="lots")]) + "\n")
    assert main(["queue", "import", str(bad), "--kind", "finance"]) == 2
    assert "row 1 (line 2), field 'invoice_amount'" in capsys.readouterr().err
    assert main(["queue", "import", str(cases), "--kind", "payroll"]) == 2
    assert "--kind: unknown queue kind 'payroll'" in capsys.readouterr().err


def test_tokens_from_the_command_line(store, capsys):
    assert main(["token", "create", "--name", "ap-agent", "--kinds", "finance", "--by", "Lead Lee", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["token"].startswith("rr_") and made["scopes"] == ["submit", "read"] and made["kinds"] == ["finance"]
    assert main(["token", "create", "--name", "ap-agent", "--kinds", "finance"]) == 2
    assert "--name: a token named 'ap-agent' exists already" in capsys.readouterr().err
    assert main(["token", "create", "--name", "x", "--kinds", "payroll"]) == 2
    assert "--kinds: unknown queue kind 'payroll'" in capsys.readouterr().err
    assert main(["token", "create", "--name", "x", "--kinds", "finance", "--scopes", "delete"]) == 2
    assert "--scopes: delete" in capsys.readouterr().err
    assert main(["token", "list"]) == 0
    assert "ap-agent: submit,read on finance; last used never" in capsys.readouterr().out
    assert main(["token", "revoke", "--name", "ap-agent"]) == 0
    capsys.readouterr()
    assert main(["token", "list"]) == 0
    assert "ap-agent: submit,read on finance; revoked" in capsys.readouterr().out
    assert main(["token", "revoke", "--name", "ap-agent"]) == 2
