import pytest
from pydantic import ValidationError

from dashboard.settings import load_settings, settings_problem

ENV_NAMES = (
    "HINDSIGHT_API_URL",
    "HINDSIGHT_API_KEY",
    "RECALL_REVIEW_FINANCE_BANK",
    "RECALL_REVIEW_ALLOW_INSECURE_HTTP",
    "RECALL_REVIEW_DATABASE_URL",
    "RECALL_REVIEW_ROLE",
    "RECALL_REVIEW_ROLES",
    "RECALL_REVIEW_APPROVAL_LIMITS",
    "RECALL_REVIEW_SECOND_REVIEW_SHARE",
    "RECALL_REVIEW_REASON_CODES",
    "RECALL_REVIEW_QUEUES",
    "RECALL_REVIEW_KINDS",
    "RECALL_REVIEW_SUPPORT_BANK",
    "RECALL_REVIEW_EXCEPTIONS_FILE",
    "RECALL_REVIEW_TICKETS_FILE",
)


@pytest.fixture
def env(monkeypatch):
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)

    def set_env(**values: str) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)

    return set_env


def _problem(tmp_path, **values) -> str:
    with pytest.raises(ValidationError) as error:
        load_settings(secrets_file=tmp_path / "none.toml")
    return settings_problem(error.value)


def test_no_url_means_embedded_on_loopback_and_a_local_store(tmp_path, env):
    settings = load_settings(secrets_file=tmp_path / "none.toml")
    assert settings.embedded and settings.base_url == "http://127.0.0.1:8888"
    assert settings.store_url is None and settings.role == "lead"


def test_environment_wins_over_secrets(tmp_path, env):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        'HINDSIGHT_API_URL = "http://from-secrets:1"\nRECALL_REVIEW_FINANCE_BANK = "fin-s"\n'
        '[hindsight]\nHINDSIGHT_API_KEY = "k-secret"\n'
        '[roles]\nlead = ["lee@example.com"]\nreviewer = ["group:ap-team"]\n'
    )
    env(HINDSIGHT_API_URL="https://from-env/", RECALL_REVIEW_DATABASE_URL="postgresql+psycopg://u:pw-secret@db/review")
    settings = load_settings(secrets_file=secrets)
    assert settings.base_url == "https://from-env" and not settings.embedded
    assert settings.finance_bank == "fin-s" and settings.api_key == "k-secret"
    assert settings.roles.lead == ["lee@example.com"] and settings.roles.reviewer == ["group:ap-team"]
    assert settings.store_url == "postgresql+psycopg://u:pw-secret@db/review"
    for secret in ("k-secret", "pw-secret"):
        assert secret not in repr(settings) and secret not in str(settings.model_dump())


def test_bad_url_is_a_clear_error(tmp_path, env):
    env(HINDSIGHT_API_URL="localhost:8888")
    assert "HINDSIGHT_API_URL must start with http" in _problem(tmp_path)


def test_credentials_in_the_url_are_refused_without_echoing_them(tmp_path, env):
    env(HINDSIGHT_API_URL="https://admin:hunter2@hindsight.example")
    with pytest.raises(ValidationError) as error:
        load_settings(secrets_file=tmp_path / "none.toml")
    assert "must not contain credentials" in settings_problem(error.value)
    assert "hunter2" not in str(error.value) and "hunter2" not in settings_problem(error.value)


def test_a_key_over_plain_http_to_another_host_is_refused_unless_allowed(tmp_path, env):
    env(HINDSIGHT_API_URL="http://hindsight.example:8888", HINDSIGHT_API_KEY="k-secret")
    problem = _problem(tmp_path)
    assert "RECALL_REVIEW_ALLOW_INSECURE_HTTP" in problem and "k-secret" not in problem
    env(RECALL_REVIEW_ALLOW_INSECURE_HTTP="true")
    assert load_settings(secrets_file=tmp_path / "none.toml").base_url == "http://hindsight.example:8888"
    # Loopback over http with a key is fine (a tunnel or a sidecar).
    env(RECALL_REVIEW_ALLOW_INSECURE_HTTP="false", HINDSIGHT_API_URL="http://127.0.0.1:9000")
    assert load_settings(secrets_file=tmp_path / "none.toml").api_key == "k-secret"


def test_bad_store_url_role_and_bank_name_the_setting(tmp_path, env):
    env(RECALL_REVIEW_DATABASE_URL="mysql://x/y")
    assert "RECALL_REVIEW_DATABASE_URL" in _problem(tmp_path)
    env(RECALL_REVIEW_DATABASE_URL="", RECALL_REVIEW_ROLE="admin")
    assert _problem(tmp_path).startswith("RECALL_REVIEW_ROLE:")
    env(RECALL_REVIEW_ROLE="viewer", RECALL_REVIEW_FINANCE_BANK="x" * 300)
    assert _problem(tmp_path).startswith("RECALL_REVIEW_FINANCE_BANK:")


def test_approval_limits_from_the_environment_or_secrets_and_a_bad_value_names_the_setting(tmp_path, env):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text("[approval_limits]\nreviewer = 10000\nDana = 20000\n")
    assert load_settings(secrets_file=secrets).approval_limits == {"reviewer": 10000, "Dana": 20000}
    env(RECALL_REVIEW_APPROVAL_LIMITS='{"lead": 50000}')
    assert load_settings(secrets_file=secrets).approval_limits == {"lead": 50000}  # the environment wins
    for bad in ('{"reviewer": 10000', '{"reviewer": -5}', '{"reviewer": "lots"}', "[10000]"):
        env(RECALL_REVIEW_APPROVAL_LIMITS=bad)
        assert _problem(tmp_path).startswith("RECALL_REVIEW_APPROVAL_LIMITS"), bad


def test_the_second_review_share_defaults_to_a_tenth_comes_from_secrets_or_the_environment_and_is_checked(
    tmp_path, env
):
    assert load_settings(secrets_file=tmp_path / "none.toml").second_review_share == 0.10
    secrets = tmp_path / "secrets.toml"
    secrets.write_text("RECALL_REVIEW_SECOND_REVIEW_SHARE = 0.25\n")
    assert load_settings(secrets_file=secrets).second_review_share == 0.25
    env(RECALL_REVIEW_SECOND_REVIEW_SHARE="0.5")
    assert load_settings(secrets_file=secrets).second_review_share == 0.5  # the environment wins
    for bad in ("1.5", "-0.1", "a tenth"):
        env(RECALL_REVIEW_SECOND_REVIEW_SHARE=bad)
        assert _problem(tmp_path).startswith("RECALL_REVIEW_SECOND_REVIEW_SHARE"), bad


def test_reason_codes_per_exception_type_from_secrets_or_the_environment_and_a_bad_value_names_the_setting(
    tmp_path, env
):
    assert load_settings(secrets_file=tmp_path / "none.toml").reason_codes == {}
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('[reason_codes.price_variance]\nPRICE_AGREED = "Price agreed with the vendor"\n')
    assert load_settings(secrets_file=secrets).reason_codes == {
        "price_variance": {"PRICE_AGREED": "Price agreed with the vendor"}
    }
    env(RECALL_REVIEW_REASON_CODES='{"default": {"OTHER": "Other"}}')
    assert load_settings(secrets_file=secrets).reason_codes == {"default": {"OTHER": "Other"}}  # the environment wins
    for bad in ('{"price_variance": ', '{"price_variance": {}}', '{"price_variance": {"X": ""}}', '["PRICE_AGREED"]'):
        env(RECALL_REVIEW_REASON_CODES=bad)
        assert _problem(tmp_path).startswith("RECALL_REVIEW_REASON_CODES"), bad


def test_the_embedded_servers_query_languages_default_to_english_and_a_bad_value_names_the_setting(
    tmp_path, env, monkeypatch
):
    monkeypatch.delenv("HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES", raising=False)
    assert load_settings(secrets_file=tmp_path / "none.toml").query_languages == "en"
    env(HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES="en,de")
    assert load_settings(secrets_file=tmp_path / "none.toml").query_languages == "en,de"
    env(HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES="en; rm -rf /")
    assert _problem(tmp_path).startswith("HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES:")


def test_each_queue_kind_has_its_settings_under_its_key_and_the_older_names_still_work(tmp_path, env):
    from dashboard.kinds import KindError, by_key, configured, registered

    env(RECALL_REVIEW_FINANCE_BANK="ap-old")
    settings = load_settings(secrets_file=tmp_path / "none.toml")
    assert settings.queue("finance").bank == "ap-old" and settings.finance_bank == "ap-old"  # the older name, honoured
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        'kinds = ["tests.kinds.disputes:DISPUTES"]\n[queues.finance]\nbank = "ap"\ncases = "q.csv"\n[queues.disputes]\nbank = "po"\n'
    )
    settings = configured(load_settings(secrets_file=secrets))
    # the per-kind table wins over the older name, and both say the same from then on
    assert (settings.queue("finance").bank, settings.finance_bank, str(settings.exceptions_file)) == (
        "ap",
        "ap",
        "q.csv",
    )
    assert [k.key for k in registered(settings)] == ["finance", "support", "disputes"]
    assert settings.queue("disputes").bank == "po" and settings.banks == ("ap", "recall-review-support", "po")
    assert by_key(settings, "disputes").title == "Purchase-order disputes"
    env(RECALL_REVIEW_QUEUES='{"support": {"bank": "help"}}', RECALL_REVIEW_KINDS="")
    settings = configured(load_settings(secrets_file=tmp_path / "none.toml"))
    assert settings.support_bank == "help" and settings.banks == ("ap-old", "help")
    with pytest.raises(KindError, match="unknown queue kind 'disputes'; one of finance, support"):
        by_key(settings, "disputes")

    env(RECALL_REVIEW_KINDS="tests.kinds.nowhere:KIND")
    with pytest.raises(KindError, match="'tests.kinds.nowhere:KIND' cannot be loaded"):
        registered(load_settings(secrets_file=tmp_path / "none.toml"))
    env(RECALL_REVIEW_KINDS="dashboard.settings:Settings")
    with pytest.raises(KindError, match="is not a queue kind"):
        registered(load_settings(secrets_file=tmp_path / "none.toml"))
    env(RECALL_REVIEW_KINDS="no colon")
    assert _problem(tmp_path) == "RECALL_REVIEW_KINDS: 'no colon' is not \"package.module:KIND\""
    env(RECALL_REVIEW_KINDS="", RECALL_REVIEW_QUEUES="{not json")
    assert _problem(tmp_path).startswith("RECALL_REVIEW_QUEUES must be a JSON object of queue kind to its settings")
