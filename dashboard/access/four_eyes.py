"""The shape curation and vouching share: one person proposes, a second, different person settles it (four eyes).
What each proposes, and what settling it does, stays with them (review/curation.py, origin/vouching.py); both ask it who may settle."""

from __future__ import annotations

from dashboard.access.roles import Action, require
from dashboard.settings import Role
from dashboard.store.errors import InputError, Refused
from dashboard.store.identity import Actor, Person, as_person, same_person
from dashboard.store.schema import NAME


def typed(error: type[InputError], field: str, value: str | None, limit: int) -> str:
    """A field a person typed, stripped: required, at most `limit` characters, no control characters."""
    text = (value or "").strip()
    if not text:
        raise error(field, "required")
    if len(text) > limit:
        raise error(field, f"{len(text):,} characters; the limit is {limit:,}")
    if any(ord(ch) < 32 and ch not in "\n\t" for ch in text):
        raise error(field, "must not contain control characters")
    return text


def proposer(error: type[InputError], role: Role, action: Action, who: Actor) -> tuple[Person, str]:
    """The person proposing, once their role may `action`; with their name as typed."""
    require(role, action)
    person = as_person(who)
    return person, typed(error, "proposer", person.name, NAME)


def second_person(
    error: type[InputError], role: Role, action: Action, who: Actor, proposed_by: Person, step: str, what: str = "this"
) -> tuple[Person, str]:
    """The person settling a proposal (`step`: approve, confirm, refuse…), once their role may `action` and they are
    not who proposed it."""
    require(role, action)
    person = as_person(who)
    name = typed(error, "lead", person.name, NAME)
    if same_person(proposed_by, person):
        raise Refused(f"{name} proposed {what}; another lead must {step} it (four eyes).")
    return person, name
