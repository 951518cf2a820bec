"""The one escaping helper for untrusted strings that reach a markdown-rendering element.

Reviewer names, notes, queue-file ids, document ids, server messages: everything a user, a file or a
server typed. st.success/warning/error/info/caption/header/markdown, labels and toasts all render
markdown: links and images (`[..](..)`, `![..](..)`, bare `http://` autolinks), emphasis, code, HTML,
`$math$`, tables, and Streamlit's `:material/icon:`, `:emoji:` and `:red[...]` directives. `md(text)`
backslash-escapes exactly the characters that start any of those (CommonMark allows a backslash before
any ASCII punctuation), so the text shows as written and nothing in it is ever fetched or followed.
Plain punctuation that starts nothing (". , ; ' \" ( ) -" mid-line, ": " before a space) is left alone,
so what a test or a screen reader sees stays readable.
"""

from __future__ import annotations

import re

_ALWAYS = re.compile(r"([\\`*_\[\]<>!~$|{}&])")  # links, images, emphasis, code, HTML, math, tables, entities
_DIRECTIVE_COLON = re.compile(r":(?=\S)")  # :material/x:, :smile:, :red[..], and the :// of an autolink
_LINE_START = re.compile(r"^([#+=>-]|\d+[.)])")  # headings, lists, setext underlines, quotes
_LINE_BREAKS = re.compile(r"[\r\n\t\f\v]+")


def md(value: object, max_chars: int = 500) -> str:
    """`value` as markdown that renders as its literal text (one line, at most `max_chars` characters)."""
    text = _LINE_BREAKS.sub(" ", str(value)).strip()  # leading spaces would make an indented code block
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    text = _ALWAYS.sub(r"\\\1", text)
    text = _DIRECTIVE_COLON.sub(r"\\:", text)
    return _LINE_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], text)
