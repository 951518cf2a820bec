"""Sign-in keeps your place: only a path on this app, taken from a same-origin Referer, is ever returned to (the browser
journey is tests/e2e/test_sign_in.py)."""

import pytest

from dashboard.app.return_to import place_of, safe_place


@pytest.mark.parametrize(
    ("referer", "place"),
    [
        ("http://127.0.0.1:8501/exceptions?case=E-1002", "/exceptions?case=E-1002"),
        ("https://review.example.com/tickets?case=T-2004&x=1", "/tickets?case=T-2004&x=1"),
        ("http://127.0.0.1:8501/", "/"),
        ("http://evil.example/exceptions?case=E-1002", None),  # another origin
        ("http://127.0.0.1:8501/oauth2callback?code=x", None),  # the sign-in's own routes
        ("http://127.0.0.1:8501/auth/login?provider=x", None),
        ("javascript:alert(1)", None),
        ("", None),
    ],
)
def test_the_place_is_the_same_origin_referers_path_and_query(referer, place):
    host = "review.example.com" if "review.example.com" in referer else "127.0.0.1:8501"
    assert place_of(referer, host) == place


@pytest.mark.parametrize(
    "value",
    [
        "//evil.example/x",
        "/\\evil.example",
        "https://evil.example/",
        "evil",
        "/x\r\nSet-Cookie: a=b",
        "/" + "a" * 2100,
        "/_stcore/health",
    ],
)
def test_a_cookie_naming_anything_but_a_page_of_this_app_is_ignored(value):
    assert safe_place(value) is None
