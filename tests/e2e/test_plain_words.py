"""Plain words where people read: the visible text of Home, the Overview and T-2004's page, in Chromium, holds none
of the recall's raw parameter names (they stay in tooltips and on the Traces page, each beside its plain meaning)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import settled

pytestmark = pytest.mark.browser

RAW_TERMS = re.compile(
    r"any_strict|all_strict|tags_match|max_tokens|\bbudget\b|fusion score|\bRRF\b|BM25|reranker|\bbanks?\b|\barms?\b"
    r"|world memor|experience memor|verbatim|observations off",
    re.IGNORECASE,
)
PAGES = {"Home": "", "Overview": "overview", "T-2004": "tickets?ticket=T-2004"}


def raw_terms(text: str) -> list[str]:
    """Each line of `text` that holds a raw term, with the term."""
    return [f"{m.group(0)!r} in {line.strip()!r}" for line in text.splitlines() for m in [RAW_TERMS.search(line)] if m]


def test_raw_terms_are_caught():
    assert raw_terms("Tags: customer:ann-lee (any_strict)\nfine line\nthe keyword arm (BM25)") == [
        "'any_strict' in 'Tags: customer:ann-lee (any_strict)'",
        "'arm' in 'the keyword arm (BM25)'",
    ]
    assert not raw_terms("Armstrong banked on embarking")  # whole words only


@pytest.mark.parametrize("name", PAGES)
def test_the_page_a_person_reads_says_it_in_plain_words(read_only_app, page, name):
    page.goto(f"{read_only_app.url}/{PAGES[name]}")
    settled(page)
    main = page.get_by_test_id("stMain")
    main.get_by_role("heading").first.wait_for()
    if name == "T-2004":
        page.get_by_text("Old records used").first.wait_for()  # its recall account is drawn
        settled(page)
    found = raw_terms(main.inner_text())
    assert not found, f"{name}: " + "; ".join(found)
