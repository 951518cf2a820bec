"""The escaping helper, checked by rendering with a CommonMark engine (with linkify, as GFM autolinks)."""

import html

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from components.safe_text import md

RENDER = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable(["table", "strikethrough"])
HOSTILE = [
    "![x](http://127.0.0.1:9/p.png) <b>x</b> [y](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "**bold** _it_ `code` ~~s~~",
    "# heading",
    "- item",
    "1. item",
    "> quote",
    "a | b\n--|--\nc | d",
    "    indented code",
    "&lt;b&gt;",
    "[ref]: http://x",
    "<http://x.invalid>",
    "$x^2$",
    "E-1001: V01",
]


def _text(markup: str) -> str:
    """The rendered HTML must be one paragraph of plain text: no other tag."""
    rendered = RENDER.render(markup).strip()
    assert rendered.startswith("<p>") and rendered.endswith("</p>"), rendered
    inner = rendered[3:-4]
    assert "<" not in inner, rendered
    return html.unescape(inner)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_render_as_their_literal_text(text):
    assert _text(md(text)) == " ".join(text.split("\n")).strip()


@given(
    st.text(alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), min_size=1, max_size=80).filter(
        str.strip
    )
)
def test_any_printable_text_renders_literally(text):
    assert _text(md(text)) == text.strip()


def test_long_values_are_cut():
    assert len(md("x" * 10_000, max_chars=100)) == 100
