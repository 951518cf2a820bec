"""What every kind's decision form shares: its fields' keys, its unsent drafts, and the long-note refusal (each kind's
form lives with its pages: finance/pages/form.py).

Every input is keyed by its case, so nothing chosen or typed on one case appears on another; what was chosen and typed
but not sent is kept per case for the session (a draft), marked on the case and in the queue; a submit (the form's
button, or the accept key through `submission.hold`) carries the case and what its screen showed (`Shown`), which
the decision service checks against the case as it is when the decision is recorded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from components.attention import draw_attention
from components.safe_text import md
from dashboard.store.decision import NOTE_MAX_CHARS

ACCEPT, OVERRIDE = "accept", "override"
NOTE_LABEL, OUTCOME_LABEL = "Note", "Override outcome"
REVISE_LABEL, REVISE_BUTTON = "Reason for revising (required)", "Revise decision"
LONG_NOTE_KEY = "decision_long_note"
FRESH = {"choice": ACCEPT, "outcome": None, "reason": None, "note": "", "revise": ""}  # the fields as a form starts
NOTICE_HEIGHT = 72  # px: the draft notice's slot, kept whether or not there is a draft, so nothing under it moves


@dataclass(frozen=True)
class Drafts:
    """One page's unsent drafts in this session, under the session key `store`: case id -> its unsent fields (field ->
    value). Streamlit forgets a widget's value once a run no longer draws it (another case is open); the draft outlives
    it. The finance form and the ticket form each keep theirs, so a case id never meets another page's draft."""

    store: str

    def of(self, case_id: str) -> dict | None:
        """The case's unsent draft (field -> value) in this session, or None."""
        return st.session_state.get(self.store, {}).get(case_id)

    def cases(self) -> list[str]:
        """The cases with an unsent draft in this session, in the order they were started."""
        return list(st.session_state.get(self.store, {}))

    def take(self, case_id: str) -> dict | None:
        return st.session_state.get(self.store, {}).pop(case_id, None)

    def put(self, case_id: str, draft: dict | None) -> None:
        if draft:
            st.session_state.setdefault(self.store, {})[case_id] = draft

    def keep(self, case_id: str, keys: Mapping[str, str], fresh: Mapping[str, object]) -> None:
        """A field's on_change: the case's fields as they are now, kept as its draft (dropped when back as they start,
        `fresh`: field -> value)."""
        values = {name: st.session_state.get(key) for name, key in keys.items()}
        if all(value == fresh.get(name) or value is None for name, value in values.items()):
            self.take(case_id)
        else:
            st.session_state.setdefault(self.store, {})[case_id] = values

    def on_change(self, case_id: str, keys: Mapping[str, str], fresh: Mapping[str, object]) -> dict:
        """The keyword arguments that make a field keep the case's draft as it changes."""
        return {"on_change": self.keep, "args": (case_id, keys, fresh)}

    def refill(self, case_id: str, keys: Mapping[str, str], options: Mapping[str, list]) -> None:
        """Before the fields are drawn: a case opened again gets its draft back in the fields Streamlit forgot (a value
        no longer offered, e.g. the recommendation changed, is left out)."""
        for name, value in (self.of(case_id) or {}).items():
            if name in keys and keys[name] not in st.session_state and (name not in options or value in options[name]):
                st.session_state[keys[name]] = value

    def notice(self, case_id: str, *, where: str) -> None:
        """Under the form and the place for what its button said, in a slot of fixed height drawn on every run: the
        case's unsent draft, said. Nothing of the form is under it, and the slot is there before the first change, so
        the notice appearing moves nothing (a click aimed at the form mid-run stays on target; above the form, it had
        moved the form down, and even reserved there it pushed the button out of a 1440x900 window)."""
        with st.container(key=f"draft_notice_{case_id}", height=NOTICE_HEIGHT, border=False):
            if self.of(case_id):  # a caption, not an alert box: three lines at the form's width fit the slot
                st.caption(
                    f":violet[Unsent draft on {md(case_id)}: kept for this session, on this {where} only; "
                    "nothing is recorded until you press the button.]"
                )
            else:
                st.caption(
                    f"What you choose and type here is kept for this session as this {where}'s draft until you record it."
                )


FINANCE_DRAFTS = Drafts("decision_drafts")
draft_of, drafted_cases = FINANCE_DRAFTS.of, FINANCE_DRAFTS.cases  # the finance page's


def field_keys(case_id: str, *, revising: bool = False) -> dict[str, str]:
    """The session keys of one case's form fields (`revising`: with the reason for revising its standing decision)."""
    fields = ("choice", "outcome", "reason", "note", *(("revise",) if revising else ()))
    return {field: f"decision_{field}_{case_id}" for field in fields}


def sent_key(case_id: str) -> str:
    """Set while a submit of the case's form is being recorded; recorded (the page reruns with it set), the form starts
    clean, so the revision form under a decision never offers the values that made it."""
    return f"decision_sent_{case_id}"


def clear_if_sent(case_id: str, fresh: Mapping[str, object], drafts: Drafts = FINANCE_DRAFTS) -> None:
    """Before the form is drawn: put its fields back as they start (session key -> value) when its last submit was
    recorded (see `sent_key`), and drop its draft. Set, not dropped: a dropped key leaves the browser's widget showing
    what it held."""
    if st.session_state.pop(sent_key(case_id), False):
        for key, value in fresh.items():
            st.session_state[key] = value
        drafts.take(case_id)


def sending(case_id: str, drafts: Drafts = FINANCE_DRAFTS) -> dict | None:
    """A submit of the case's form is being recorded: its draft is taken (returned, for `not_sent`), and once it is
    recorded the form starts clean (`sent_key`). Taken now, not when the case is next drawn: the page may move on."""
    st.session_state[sent_key(case_id)] = True
    return drafts.take(case_id)


def not_sent(case_id: str, draft: dict | None, drafts: Drafts = FINANCE_DRAFTS) -> None:
    """The submit was refused: everything chosen and typed stays, its draft too."""
    st.session_state.pop(sent_key(case_id), None)
    drafts.put(case_id, draft)


def hold_long_note(case_id: str, note: str, box_key: str) -> None:
    """A note over the limit was refused: the next run keeps its first NOTE_MAX_CHARS characters in the box
    `box_key` and shows the rest in full beside it, so nothing typed is lost (call st.rerun after)."""
    st.session_state[LONG_NOTE_KEY] = {
        "case": case_id,
        "box": box_key,
        "kept": note[:NOTE_MAX_CHARS],
        "cut": note[NOTE_MAX_CHARS:],
        "applied": False,
    }


def refill_long_note(case_id: str) -> dict | None:
    """Before the note box is drawn: a note held by `hold_long_note` for this case goes back into its box, cut to
    the limit; returns it (for `show_long_note`, after the form), or None."""
    held = st.session_state.get(LONG_NOTE_KEY)
    if not held or held["case"] != case_id:
        st.session_state.pop(LONG_NOTE_KEY, None)
        return None
    if not held["applied"]:  # set before the box is drawn: a widget's value cannot change once it is
        st.session_state[held["box"]], held["applied"] = held["kept"], True
    return held


def show_long_note(held: dict | None, *, where: str, note_label: str = NOTE_LABEL) -> None:
    """Under the form's button, where the reviewer just clicked: why the note was refused, and what was cut, in
    full, to copy what they need; brought into view with the note box focused."""
    if not held:
        return
    with st.container(key=where):
        st.warning(
            f"Not submitted: your note was {len(held['kept']) + len(held['cut']):,} characters; the limit is {NOTE_MAX_CHARS:,}. "
            f"The box keeps the first {NOTE_MAX_CHARS:,}; the last {len(held['cut']):,} were cut and are below, to copy what you need.",
            icon=":material/content_cut:",
        )
        st.code(held["cut"], language=None, wrap_lines=True, height=240)  # plain text, in full (it scrolls)
        if not held.get("shown"):  # once: later runs leave the reviewer where they are
            held["shown"] = True
            draw_attention(scroll_to=where, focus=note_label, key=f"{where}_attention")
