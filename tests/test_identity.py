"""Reviewer identity: signed-in users are recorded as authenticated; required login stops pages."""

from streamlit.testing.v1 import AppTest

from tests.conftest import APP
from tests.test_finance_app import PAGE, _select, exceptions_page  # noqa: F401  (a fixture)

AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "test", "client_id": "x",
        "client_secret": "y", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}  # fmt: skip


def _app(user: dict | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = AUTH
    if user is not None:
        at.user = user
    return at


def test_signed_in_reviewer_is_recorded_as_authenticated(exceptions_page):  # noqa: F811
    _start, _bank, outbox = exceptions_page
    at = _app({"is_logged_in": True, "name": "Dana Signed", "email": "dana@example.com"}).run()
    at.switch_page(PAGE).run()
    at = _select(at, "E-1001")
    assert any("Signed in as Dana Signed" in t.value for t in at.sidebar.text)
    assert not [w for w in at.text_input if w.key == "reviewer_name"]  # no name to type when signed in
    at.button(key="decision_submit").click().run()
    stored = outbox.latest("exception", "E-1001")
    assert (stored.decision.reviewer, stored.decision.authenticated) == ("Dana Signed", True)


def test_required_login_stops_the_page_until_signed_in(exceptions_page, monkeypatch):  # noqa: F811
    monkeypatch.setenv("RECALL_REVIEW_REQUIRE_LOGIN", "true")
    at = _app({"is_logged_in": False}).run()
    assert not at.exception
    assert any("Sign in to review" in i.value for i in at.info)
    assert not at.title  # the page itself did not render
    assert at.sidebar.button(key="sign_in")


def test_required_login_without_auth_configured_says_so(exceptions_page, monkeypatch):  # noqa: F811
    monkeypatch.setenv("RECALL_REVIEW_REQUIRE_LOGIN", "true")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert any("no [auth] section is configured" in e.value for e in at.error)
    assert not at.title
