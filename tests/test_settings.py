import pytest
from pydantic import ValidationError

from dashboard.settings import load_settings


def test_no_url_means_embedded_on_loopback(tmp_path):
    settings = load_settings({}, secrets_file=tmp_path / "none.toml")
    assert settings.embedded and settings.base_url == "http://127.0.0.1:8888"


def test_environment_wins_over_secrets(tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('HINDSIGHT_API_URL = "http://from-secrets:1"\nRECALL_REVIEW_FINANCE_BANK = "fin-s"\n[hindsight]\nHINDSIGHT_API_KEY = "k-secret"\n')
    settings = load_settings({"HINDSIGHT_API_URL": "https://from-env/"}, secrets_file=secrets)
    assert settings.base_url == "https://from-env" and not settings.embedded
    assert settings.finance_bank == "fin-s" and settings.api_key == "k-secret"
    assert "k-secret" not in repr(settings) and "k-secret" not in str(settings.model_dump())


def test_bad_url_is_a_clear_error(tmp_path):
    with pytest.raises(ValidationError, match="HINDSIGHT_API_URL must start with http"):
        load_settings({"HINDSIGHT_API_URL": "localhost:8888"}, secrets_file=tmp_path / "none.toml")
