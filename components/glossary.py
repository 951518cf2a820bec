"""One plain glossary for "How this was recalled": each technical word the section uses, said once, here."""

from __future__ import annotations

import streamlit as st

GLOSSARY: dict[str, str] = {
    "exact (pass 1)": "records tagged with this vendor AND this exception type (all_strict: every tag must match; an "
    "untagged record never does).",
    "broader (pass 2)": "records tagged with this vendor OR this type (any_strict), searched only when the exact ones do not fill k.",
    "k": "how many precedent documents a case recalls; an LLM server's several facts of one document count once.",
    "crowd-out": "a plain single search over this vendor or this type ranking broader records above exact precedents, so it loses some.",
    "max_tokens": "the token budget of one response; a response cut by it may show fewer facts of its lowest-ranked documents.",
    "scores": "final is the reranker's score; semantic is closeness in meaning; keyword is the BM25 word match.",
    "tagged recall": "this customer's records, found by their customer tag (any_strict: untagged records are excluded).",
    "legacy fallback": "a bank-wide search of old untagged records, run only when a customer has no tagged history; it only proposes "
    "candidates, the ownership rule decides.",
    "observation": "a summary Hindsight built across several records: shown for context, never a precedent.",
    "trace": "the same recall run again with trace=True on the Traces page: which way of searching found each record.",
}
FINANCE_TERMS = ("exact (pass 1)", "broader (pass 2)", "k", "crowd-out", "max_tokens", "scores", "observation", "trace")
SUPPORT_TERMS = ("tagged recall", "legacy fallback", "observation", "max_tokens", "trace")


def render_glossary(terms: tuple[str, ...]) -> None:
    """The words of `terms`, each once, in plain language (a caption heading, then one wrapped text)."""
    st.caption("Words used here")
    st.text("\n".join(f"{term}: {GLOSSARY[term]}" for term in terms))
