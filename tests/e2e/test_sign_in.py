"""Sign-in through a real OpenID Connect provider (panva's oidc-provider on Node, tests/oidc) in Chromium: who acts
is the provider's subject, roles come from its group claims, and the four-eyes rules compare subjects, not names.

One provider and one app serve the module (each test its own cases and browser contexts); the app requires sign-in
(RECALL_REVIEW_REQUIRE_LOGIN) and maps the groups ap-leads, ap-reviewers and stakeholders to lead, reviewer and
viewer; anyone else signed in is a viewer."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from itsdangerous import URLSafeTimedSerializer
from playwright.sync_api import Browser, Page, expect

from dashboard.cli.app_server import serve_app
from dashboard.delivery.outbox import Outbox
from dashboard.processes import free_port
from dashboard.review.approvals import Approvals
from dashboard.store.db import make_engine
from tests.conftest import SIGNING_SECRET, seed_demo_banks
from tests.e2e.conftest import ARTIFACTS, VIEWPORT, WAIT, click_button, heading, settled
from tests.oidc_provider import Provider, auth_secrets, client_for, oidc_provider
from tests.warm_app import start_warmed

pytestmark = pytest.mark.browser

DANA = {
    "login": "dana",
    "password": "dana-pw-1",
    "sub": "u-dana-7c1",
    "name": "Dana Reviewer",
    "email": "dana@example.com",
    "groups": ["ap-reviewers"],
}
RAY = {
    "login": "ray",
    "password": "ray-pw-2",
    "sub": "u-ray-3f9",
    "name": "Ray Second",
    "email": "ray@example.com",
    "groups": ["ap-reviewers"],
}
LEE = {
    "login": "lee",
    "password": "lee-pw-3",
    "sub": "u-lee-5b2",
    "name": "Lee Lead",
    "email": "lee@example.com",
    "groups": ["ap-leads"],
}
VIC = {
    "login": "vic",
    "password": "vic-pw-4",
    "sub": "u-vic-9d0",
    "name": "Vic Viewer",
    "email": "vic@example.com",
    "groups": ["stakeholders"],
}
BRIEF = {
    "login": "brief",
    "password": "brief-pw-5",
    "sub": "u-brief-2a4",
    "name": "Bea Brief",
    "email": "bea@example.com",
    "groups": ["ap-reviewers"],
    "id_token_ttl": 12,
}
MARKUP = "<img src=x onerror=alert(1)> **Mal** [x](javascript:alert(1))"
MAL = {
    "login": "mal",
    "password": "mal-pw-6",
    "sub": "u-mal-0e7",
    "name": MARKUP,
    "email": "mal@example.com",
    "groups": ["ap-reviewers"],
}
USERS = [DANA, RAY, LEE, VIC, BRIEF, MAL]
COOKIE = "_streamlit_user"  # Streamlit's session cookie: the ID token's claims, signed
COOKIE_SECRET = "test-cookie-secret-0123456789abcdef"  # tests/oidc_provider.auth_secrets's default
ROLES = {
    "lead": ["group:ap-leads"],
    "reviewer": ["group:ap-reviewers"],
    "viewer": ["group:stakeholders"],
    "signed_in": "viewer",
}


@dataclass
class SignedInApp:
    url: str
    bank: str
    provider: Provider
    data_dir: Path

    def outbox(self) -> Outbox:
        return Outbox(make_engine(None, self.data_dir), signing_key=SIGNING_SECRET)

    def decisions(self, case_id: str) -> list:
        return [d for d in self.outbox().history() if d.decision.case_id == case_id]


@pytest.fixture(scope="module")
def signed_in_app(hindsight, tmp_path_factory) -> Iterator[SignedInApp]:
    banks = seed_demo_banks(hindsight)
    port = free_port()
    client = client_for(port)
    data_dir = Path(tempfile.mkdtemp(prefix="recall-review-sign-in-"))
    env = {k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"}
    env.update(hindsight.env(finance=banks.finance, support=banks.support))
    env.update(
        {
            "RECALL_REVIEW_REQUIRE_LOGIN": "true",
            "RECALL_REVIEW_ROLES": json.dumps(ROLES),
            "RECALL_REVIEW_APPROVAL_LIMITS": json.dumps({"reviewer": 10000, "lead": 50000}),
            "RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10",
        }
    )
    try:
        with oidc_provider(tmp_path_factory.mktemp("oidc"), USERS, [client]) as provider:
            (data_dir / ".streamlit").mkdir(parents=True)
            (data_dir / ".streamlit" / "secrets.toml").write_text(auth_secrets(provider, client))  # HOME is data_dir
            with serve_app(env, data_dir, start=start_warmed, port=port) as url:
                yield SignedInApp(url=url, bank=banks.finance, provider=provider, data_dir=data_dir)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def new_page(browser: Browser) -> Iterator:
    """A page in a browser context of its own (its own cookies: one person each)."""
    contexts = []

    def make() -> Page:
        context = browser.new_context(viewport=VIEWPORT)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(WAIT)
        return page

    yield make
    for context in contexts:
        context.close()


def sign_in(page: Page, app: SignedInApp, user: dict, path: str = "/") -> None:
    """Open `path`, press Sign in, and sign in on the provider's own page as `user`."""
    page.goto(app.url + path)
    click_button(page, "Sign in")
    page.wait_for_url(re.compile(re.escape(app.provider.issuer) + "/interaction/"))
    page.fill("input[name=login]", user["login"])
    page.fill("input[name=password]", user["password"])
    page.click("button#submit")
    page.wait_for_url(re.compile(re.escape(app.url)))
    expect(page.get_by_text(f"Signed in as {user['name']}", exact=True)).to_be_visible()


def sign_out(page: Page) -> None:
    """Sign out, and wait until the browser has been through the provider's logout and the session cookie is gone
    (the page redraws "Sign in" before that: a page opened then would still find the cookie)."""
    click_button(page, "Sign out")
    deadline = time.monotonic() + WAIT / 1000
    while any(c["name"] == COOKIE for c in page.context.cookies()) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert not any(c["name"] == COOKIE for c in page.context.cookies()), "the session cookie outlived Sign out"
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()


def open_case(page: Page, app: SignedInApp, case_id: str) -> None:
    page.goto(f"{app.url}/exceptions?case={case_id}")
    expect(heading(page, case_id)).to_be_visible()
    settled(page)


def cannot_decide(page: Page) -> None:
    """A viewer's case page: the accept and override keys are drawn disabled and no decision form is drawn."""
    expect(page.get_by_role("button", name=re.compile("^Accept: "))).to_be_disabled()
    expect(page.get_by_role("button", name=re.compile("^Override"))).to_be_disabled()
    assert page.get_by_role("button", name="Record decision").count() == 0


def test_a_reviewer_signs_in_on_the_providers_page_and_the_decision_records_who_the_provider_said(
    signed_in_app, new_page, shots
):
    app, page = signed_in_app, new_page()
    page.goto(app.url + "/exceptions?case=E-1002")
    expect(page.get_by_text("Sign in to review.")).to_be_visible()  # nothing of the queue before sign-in
    click_button(page, "Sign in")
    page.fill("input[name=login]", DANA["login"])
    page.fill("input[name=password]", "not-her-password")
    page.click("button#submit")
    expect(page.locator("#error")).to_have_text("Invalid login or password.")  # the provider refuses, nobody signs in
    page.screenshot(path=str(ARTIFACTS / "sign-in-provider-refuses.png"))  # the provider's own page (no Streamlit run)
    page.fill("input[name=password]", DANA["password"])
    page.click("button#submit")
    expect(page.get_by_text("Signed in as Dana Reviewer", exact=True)).to_be_visible()
    expect(page.get_by_text("Your role: reviewer", exact=False)).to_be_visible()

    open_case(page, app, "E-1002")
    expect(page.get_by_text("Recorded as Dana Reviewer (signed in)", exact=True)).to_be_visible()
    assert page.locator('input[aria-label="Reviewer name"]').count() == 0  # no typed identity anywhere
    shots(page, "sign-in-reviewer-case")
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile("E-1002 recorded"))).to_be_visible()
    (stored,) = app.decisions("E-1002")
    d = stored.decision
    assert (d.reviewer, d.authenticated, d.reviewer_subject, d.reviewer_issuer) == (
        "Dana Reviewer",
        True,
        DANA["sub"],
        app.provider.issuer,
    )

    sign_out(page)
    page.goto(app.url + "/exceptions?case=E-1002")
    expect(page.get_by_text("Sign in to review.")).to_be_visible()


def test_a_deep_link_to_a_case_signs_in_and_lands_on_that_case_and_the_decision_keeps_subject_issuer_and_role(
    signed_in_app, new_page, shots
):
    app, page = signed_in_app, new_page()
    page.goto(app.url + "/exceptions?case=E-1017")
    expect(page.get_by_text("Sign in to review.")).to_be_visible()
    click_button(page, "Sign in")
    page.wait_for_url(re.compile(re.escape(app.provider.issuer) + "/interaction/"))
    page.fill("input[name=login]", DANA["login"])
    page.fill("input[name=password]", DANA["password"])
    page.click("button#submit")
    page.wait_for_url(re.compile(re.escape(app.url) + r"/exceptions\?case=E-1017$"))  # the place it left, not Home
    expect(heading(page, "E-1017")).to_be_visible()
    expect(page.get_by_text("Recorded as Dana Reviewer (signed in)", exact=True)).to_be_visible()
    shots(page, "sign-in-keeps-the-case")
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile("E-1017 recorded"))).to_be_visible()
    (stored,) = app.decisions("E-1017")
    d = stored.decision
    assert (d.reviewer_subject, d.reviewer_issuer, d.role) == (DANA["sub"], app.provider.issuer, "reviewer")
    assert not any(c["name"] == "recall_review_return_to" for c in page.context.cookies())  # used once, then gone


def test_a_viewer_cannot_decide_and_a_reviewer_taken_out_of_the_group_is_a_viewer_at_the_next_sign_in(
    signed_in_app, new_page
):
    app = signed_in_app
    vic = new_page()
    sign_in(vic, app, VIC)
    expect(vic.get_by_text("Your role: viewer", exact=False)).to_be_visible()
    open_case(vic, app, "E-1005")
    cannot_decide(vic)

    ray = new_page()
    sign_in(ray, app, RAY)
    expect(ray.get_by_text("Your role: reviewer", exact=False)).to_be_visible()
    sign_out(ray)
    app.provider.set_users([{**RAY, "groups": []} if u is RAY else u for u in USERS])
    try:
        sign_in(ray, app, RAY)
        expect(ray.get_by_text("Your role: viewer", exact=False)).to_be_visible()
        open_case(ray, app, "E-1005")
        cannot_decide(ray)
    finally:
        app.provider.set_users(USERS)
    assert app.decisions("E-1005") == []


def test_an_approval_above_the_limit_is_released_by_another_signed_in_person_never_by_its_proposer_under_another_name(
    signed_in_app, new_page, shots
):
    app = signed_in_app
    dana = new_page()
    sign_in(dana, app, DANA)
    open_case(dana, app, "E-1004")  # 14,250.00, above the reviewer role's 10,000.00
    click_button(dana, "Record decision")
    expect(dana.get_by_text(re.compile("E-1004 recorded: .* awaiting a second approval"))).to_be_visible()

    sign_out(dana)  # the provider now calls her something else: still one person, her subject
    app.provider.set_users(
        [{**DANA, "name": "Dana R. Smith", "groups": ["ap-leads"]} if u is DANA else u for u in USERS]
    )
    try:
        sign_in(dana, app, {**DANA, "name": "Dana R. Smith"})
        open_case(dana, app, "E-1004")
        expect(
            dana.get_by_text(re.compile("You cannot give the second approval: Dana Reviewer proposed this decision"))
        ).to_be_visible()
        expect(dana.get_by_role("button", name="Confirm and release to memory")).to_be_disabled()
    finally:
        app.provider.set_users(USERS)

    lee = new_page()
    sign_in(lee, app, LEE)
    open_case(lee, app, "E-1004")
    click_button(lee, "Confirm and release to memory")
    expect(lee.get_by_text(re.compile("E-1004: Dana Reviewer's .* confirmed by Lee Lead"))).to_be_visible()
    shots(lee, "sign-in-second-approval")
    (held,) = Approvals(app.outbox().engine).trail(app.bank, "exception", "E-1004")
    assert [(s.step, s.actor, s.person_id) for s in held.steps] == [
        ("proposed", "Dana Reviewer", f"{app.provider.issuer} {DANA['sub']}"),
        ("confirmed", "Lee Lead", f"{app.provider.issuer} {LEE['sub']}"),
    ]


def test_a_blind_second_review_is_refused_to_the_first_reviewer(signed_in_app, new_page):
    app = signed_in_app
    dana = new_page()
    sign_in(dana, app, DANA)
    open_case(dana, app, "E-1013")  # sampled for a blind second review
    click_button(dana, "Record decision")
    expect(dana.get_by_text(re.compile("E-1013 recorded: .* held for a blind second review"))).to_be_visible()
    open_case(dana, app, "E-1013")
    expect(
        dana.get_by_text("You cannot decide it here: You made the first decision on this case", exact=False)
    ).to_be_visible()
    expect(dana.get_by_role("button", name="Record decision")).to_be_disabled()

    ray = new_page()
    sign_in(ray, app, RAY)
    open_case(ray, app, "E-1013")
    expect(heading(ray, "Blind second review")).to_be_visible()
    assert "Dana" not in ray.content()
    click_button(ray, "Record decision")
    expect(ray.get_by_text(re.compile("E-1013: second review recorded"))).to_be_visible()


def test_a_session_ends_when_its_sign_in_expires(signed_in_app, new_page):
    app, page = signed_in_app, new_page()
    sign_in(page, app, BRIEF)  # the provider gives Bea 12-second ID tokens
    signed_at = time.monotonic()
    expect(page.get_by_text("Your role: reviewer", exact=False)).to_be_visible()
    page.wait_for_timeout(max(0, 13_000 - (time.monotonic() - signed_at) * 1000))
    page.goto(app.url + "/exceptions?case=E-1007")
    expect(page.get_by_text("Your session has ended (its sign-in expired). Sign in again.")).to_be_visible()
    expect(page.get_by_text("Sign in to review.")).to_be_visible()
    assert app.decisions("E-1007") == []


# -- hostile inputs: each refused in words, nothing recorded ------------------------------------------------------


def _signed(claims: dict, secret: str = COOKIE_SECRET) -> str:
    """A session cookie as Streamlit signs it (itsdangerous, salted with the cookie's name)."""
    return URLSafeTimedSerializer(secret, salt=COOKIE).dumps(json.dumps(claims))


def _claims(app: SignedInApp, user: dict, **changed) -> dict:
    now = int(time.time())
    return {
        "iss": app.provider.issuer,
        "aud": "recall-review",
        "sub": user["sub"],
        "name": user["name"],
        "email": user["email"],
        "groups": user["groups"],
        "iat": now,
        "exp": now + 3600,
        "is_logged_in": True,
        "provider": "default",
        "origin": app.url,
        **changed,
    }


def _with_cookie(page: Page, app: SignedInApp, value: str) -> None:
    page.context.clear_cookies()
    page.context.add_cookies([{"name": COOKIE, "value": value, "url": app.url}])
    page.goto(app.url + "/exceptions?case=E-1008")


def test_a_forged_or_altered_session_cookie_signs_no_one_in(signed_in_app, new_page):
    app, page = signed_in_app, new_page()
    sign_in(page, app, DANA)
    (real,) = [c for c in page.context.cookies() if c["name"] == COOKIE]
    payload, stamp, signature = real["value"].rsplit(".", 2)
    lee = URLSafeTimedSerializer("x", salt=COOKIE).dumps(json.dumps(_claims(app, LEE))).rsplit(".", 2)[0]
    for forged in (
        f"{lee}.{stamp}.{signature}",  # Dana's signature on Lee's claims
        _signed(_claims(app, LEE), secret="not-the-deployments-secret-0123456789"),
    ):
        _with_cookie(page, app, forged)
        expect(page.get_by_text("Sign in to review.")).to_be_visible()
        expect(page.get_by_text("Signed in as", exact=False)).to_have_count(0)
    _with_cookie(page, app, real["value"])  # the real one still works: the refusals above were the forgeries'
    expect(page.get_by_text("Signed in as Dana Reviewer", exact=True)).to_be_visible()
    assert app.decisions("E-1008") == []


def test_a_session_from_another_issuer_or_for_another_application_is_refused_in_words(signed_in_app, new_page, shots):
    """Signed with this deployment's own cookie secret (another app sharing it, or an old configuration), so only the
    dashboard's own check on every run stands between these claims and Lee's lead role."""
    app, page = signed_in_app, new_page()
    _with_cookie(page, app, _signed(_claims(app, LEE)))  # the same cookie with this provider's claims does sign in
    expect(page.get_by_text("Signed in as Lee Lead", exact=True)).to_be_visible()
    for changed, said in (
        (
            {"iss": "http://127.0.0.1:9/another-provider"},
            "This sign-in was issued by 'http://127.0.0.1:9/another-provider'",
        ),
        ({"aud": "another-app"}, "This sign-in was issued for another application ('another-app')"),
    ):
        _with_cookie(page, app, _signed(_claims(app, LEE, **changed)))
        expect(page.get_by_text(said, exact=False)).to_be_visible()
        expect(page.get_by_text("Sign in to review.")).to_be_visible()
        shots(page, f"sign-in-refused-{next(iter(changed))}")
    assert app.decisions("E-1008") == []


def test_a_replayed_or_stateless_callback_signs_no_one_in(signed_in_app, new_page):
    app, page = signed_in_app, new_page()
    callbacks: list[str] = []
    page.on(
        "request", lambda request: callbacks.append(request.url) if "/oauth2callback?code=" in request.url else None
    )
    sign_in(page, app, DANA)
    sign_out(page)
    (callback,) = callbacks
    for url in (
        callback,
        f"{app.url}/oauth2callback?code=made-up",
        f"{app.url}/oauth2callback?code=made-up&state=made-up",
    ):
        page.goto(url)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        expect(page.get_by_text("Signed in as", exact=False)).to_have_count(0)


def test_a_name_in_markup_from_the_provider_is_shown_and_recorded_as_plain_text(signed_in_app, new_page):
    app, page = signed_in_app, new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, app, MAL)
    open_case(page, app, "E-1011")
    expect(page.get_by_text(f"Recorded as {MARKUP} (signed in)", exact=True)).to_be_visible()
    assert page.locator('img[src="x"]').count() == 0 and page.locator('a[href^="javascript"]').count() == 0
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile("E-1011 recorded"))).to_be_visible()
    (stored,) = app.decisions("E-1011")
    assert (stored.decision.reviewer, stored.decision.reviewer_subject) == (MARKUP, MAL["sub"]) and dialogs == []


def test_the_audit_log_names_the_provider_subject_of_each_signed_in_decision(signed_in_app, new_page):
    from dashboard.reporting.audit_export import audit_rows, to_csv

    app, page = signed_in_app, new_page()
    sign_in(page, app, LEE)
    open_case(page, app, "E-1016")
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile("E-1016 recorded"))).to_be_visible()
    page.goto(app.url + "/audit")
    expect(
        page.get_by_text(f"by Lee Lead (subject {LEE['sub']} at {app.provider.issuer})", exact=False)
    ).to_be_visible()
    (row,) = [r for r in audit_rows(app.outbox().history(), {}) if r.case_id == "E-1016"]
    assert (row.reviewer, row.reviewer_subject, row.reviewer_issuer) == ("Lee Lead", LEE["sub"], app.provider.issuer)
    assert f"Lee Lead,True,{LEE['sub']},{app.provider.issuer}" in to_csv([row])
