"""One plain glossary: each technical word a page uses, said once, here. "How this was recalled" and the Traces page
show the words they use; the Glossary page (views/glossary.py) lists them all."""

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
    "bank": "a memory store in Hindsight; this dashboard reads one per kind of case (finance precedents, support history).",
    "tags_match": "how a search uses tags. any_strict: records holding any of the tags, untagged ones left out; all_strict: "
    "records holding all of them; any / all: the same, but untagged records let in too; exact: the same set of tags.",
    "budget": "how hard Hindsight searches (low, mid, high): a higher budget weighs more candidates and takes longer.",
    "arm": "one way of searching, run side by side with the others: meaning (semantic), keywords (BM25), linked memories "
    "(graph) and dates (temporal).",
    "BM25": "the keyword arm's score: how well the query's words match the record's words.",
    "RRF (fusion score)": "how the arms' lists are merged into one: each arm adds 1/(60 + its rank for the record), so a "
    "record several arms rank high scores highest.",
    "reranker": "a model that reads the best merged candidates against the query and orders them again.",
    "world / experience memories": "Hindsight's two kinds of stored facts: about the world (what happened) and the agent's "
    "own experience (what it did).",
    "verbatim": "each record kept word for word: no AI model rewrites it into facts (observations off: no summaries across records).",
}
FINANCE_TERMS = ("exact (pass 1)", "broader (pass 2)", "k", "crowd-out", "max_tokens", "scores", "observation", "trace")
SUPPORT_TERMS = ("tagged recall", "legacy fallback", "observation", "max_tokens", "trace", "tags_match", "bank")
TRACE_TERMS = (
    "bank",
    "tags_match",
    "budget",
    "max_tokens",
    "arm",
    "BM25",
    "RRF (fusion score)",
    "reranker",
    "world / experience memories",
    "observation",
    "verbatim",
)
TAGS_MATCH_WORDS = {  # each tags_match value in a line, beside it wherever a request is shown
    "any_strict": "records holding any of the tags, untagged ones left out",
    "all_strict": "records holding all of the tags, untagged ones left out",
    "any": "records holding any of the tags, and untagged records",
    "all": "records holding all of the tags, and untagged records",
    "exact": "records holding exactly these tags",
}
GLOSSARY_PAGE = "views/glossary.py"  # relative to dashboard/app/main.py, as registered there


def render_glossary(terms: tuple[str, ...]) -> None:
    """The words of `terms`, each once, in plain language (a caption heading, then one wrapped text), and the way to
    the whole glossary."""
    st.caption("Words used here")
    st.text("\n".join(f"{term}: {GLOSSARY[term]}" for term in terms))
    glossary_link()


def glossary_link() -> None:
    st.page_link(GLOSSARY_PAGE, label="Glossary: every technical word, in plain words", icon=":material/menu_book:")
