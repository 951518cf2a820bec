"""With sign-in on, a command acts as an API token's owner (a token made by its owner, signed in, carrying their
subject and role), never as a typed name; a token without the decide scope, or revoked, decides nothing."""

from __future__ import annotations

import json

import pytest

from dashboard.access.api_tokens import ApiTokens, TokenError
from dashboard.cli import main
from dashboard.cli.seed import finance_records
from dashboard.delivery.outbox import Outbox
from dashboard.kinds import configured, handed_in
from dashboard.settings import load_settings
from dashboard.store.identity import Person

DANA = Person("Dana Reviewer", subject="u-dana", issuer="https://id.example.com", email="dana@example.com")
DECIDE = ["decide", "--case", "E-1001", "--outcome", "reject", "--reason", "CONTRACT_AMENDMENT", "--json"]


@pytest.fixture
def signed_in_deployment(hindsight, bank_id, monkeypatch, tmp_path):
    hindsight.gateway.retain(bank_id, finance_records())
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    for key, value in hindsight.env(finance=bank_id).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))  # where Streamlit (and the CLI) also read secrets.toml
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        '[auth]\nredirect_uri = "http://127.0.0.1:8501/oauth2callback"\ncookie_secret = "x"\nclient_id = "recall-review"\n'
        'client_secret = "y"\nserver_metadata_url = "https://id.example.com/.well-known/openid-configuration"\n'
    )
    engine = handed_in(configured(load_settings())).engine  # the deployment's review store
    return ApiTokens(engine), Outbox(engine)


def test_with_sign_in_on_decide_acts_as_a_tokens_owner_never_as_a_typed_name(signed_in_deployment, capsys):
    tokens, outbox = signed_in_deployment
    assert main([*DECIDE, "--reviewer", "Dana"]) == 2
    assert (
        "--reviewer: sign-in is on: a command acts as an API token's owner (--token), never as a typed name"
        in capsys.readouterr().err
    )
    assert main(DECIDE) == 2
    assert "--token: sign-in is on: give an API token with the decide scope" in capsys.readouterr().err
    agents, _ = tokens.create("ap-agent", ["finance"], ["submit", "read"], "Lead Lee")
    assert main([*DECIDE, "--token", agents]) == 2
    assert "--token: 'ap-agent' may not decide finance cases" in capsys.readouterr().err
    with pytest.raises(TokenError, match="a decide token acts as its owner, so its owner makes it, signed in"):
        tokens.create("typed", ["finance"], ["decide"], "Dana", role="reviewer")
    assert outbox.latest("exception", "E-1001") is None

    mine, _ = tokens.create("dana-script", ["finance"], ["decide"], DANA, role="reviewer")
    assert main([*DECIDE, "--token", mine]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "delivered"
    d = outbox.latest("exception", "E-1001").decision
    assert (d.reviewer, d.authenticated, d.reviewer_subject, d.reviewer_issuer) == (
        "Dana Reviewer",
        True,
        "u-dana",
        DANA.issuer,
    )

    tokens.revoke("dana-script")
    assert main([*DECIDE, "--token", mine]) == 2
    assert "--token: unknown or revoked" in capsys.readouterr().err
