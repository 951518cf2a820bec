"""Every refusal of the review room, in one hierarchy (as httpx keeps its errors): catch `ReviewError` for any of
them. Each message is written for the person who asked; an input error's starts with the field's name. No Streamlit.

    ReviewError
    ├── Refused            the decision may not be recorded now (held, blind, changed since shown ...)
    │   └── AlreadyDecided the case has a standing decision: changing it is an explicit revision
    ├── RevisionConflict   another decision landed on the case since it was loaded: nothing is overwritten
    ├── NotAllowed         the role may not do this (also a PermissionError)
    └── InputError         a typed value is not acceptable (also a ValueError)
        ├── DecisionInputError   a decision's field, of any queue kind
        ├── CurationInputError
        └── LabelInputError
"""

from __future__ import annotations

from dashboard.store.decision import outcome_words


class ReviewError(Exception):
    """Anything the review room refuses to do; the message says why, for a person."""


class Refused(ReviewError):
    """The decision may not be recorded now; the message says why."""


class AlreadyDecided(Refused):
    """A first decision on a case that has one standing: nothing is recorded. `standing`: that decision (a
    delivery.outbox.StoredDecision); changing it is a revision, asked for explicitly, with a reason."""

    def __init__(self, standing):
        d = standing.decision
        self.standing = standing
        self.standing_words = (
            f"{standing.case_id} is already decided: {outcome_words(d)} by {d.reviewer}, "
            f"revision {standing.revision} (decision #{standing.id})."
        )
        super().__init__(f"{self.standing_words} Changing it is a revision, which needs a reason.")


class RevisionConflict(ReviewError):
    """Another decision landed on this case since the reviewer loaded it: they choose, nothing is overwritten.
    `theirs`: that decision (a delivery.outbox.StoredDecision; not imported here, the outbox imports this module)."""

    def __init__(self, theirs, expected_revision: int):
        super().__init__(
            f"{theirs.case_kind} {theirs.case_id} was decided meanwhile (revision {theirs.revision}, you loaded {expected_revision})"
        )
        self.theirs = theirs
        self.expected_revision = expected_revision


class NotAllowed(ReviewError, PermissionError):
    """A role asked for an action that needs a higher one."""

    def __init__(self, role: str, action: str, needs: str):
        super().__init__(f"Your role is {role}; {action.replace('_', ' ')} needs {needs}.")
        self.role, self.action = role, action


class InputError(ReviewError, ValueError):
    """A value a person typed is not acceptable; the message starts with the field's name."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field, self.problem = field, problem


class DecisionInputError(InputError):
    """A decision that cannot be recorded as typed, of any queue kind; `field` names what to fix, `problem` says why
    in a sentence for the reviewer."""


class CurationInputError(InputError):
    """A curation proposal or approval with an unacceptable field."""


class VouchInputError(InputError):
    """A vouch proposal, confirmation or refusal with an unacceptable field."""


class LabelInputError(InputError):
    """A relevance label that cannot be stored."""
