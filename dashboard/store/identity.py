"""Who acted: a person as the review store records them, and the one rule for "the same person". No Streamlit.

Signed in, a person is the OpenID provider's subject at its issuer; their name is only what the provider calls them
today, so two display names with one subject are one person, and two people who share a name are two. Without
sign-in a person is a typed name (unauthenticated), compared without regard to case or surrounding spaces. A typed
name is never a different person from a signed-in one of the same name: the four-eyes rules refuse rather than
trust a name.
"""

from __future__ import annotations

from dataclasses import dataclass

SUBJECT_MAX = 255  # OpenID Connect: `sub` is at most 255 ASCII characters
ISSUER_MAX = 255


@dataclass(frozen=True)
class Person:
    name: str  # as shown: the provider's name claim (or e-mail) when signed in, else what was typed
    subject: str | None = None  # the ID token's `sub`; None: a typed name
    issuer: str | None = None  # the ID token's `iss`
    email: str | None = None

    @property
    def signed_in(self) -> bool:
        return self.subject is not None

    @property
    def id(self) -> str | None:
        """What the review store keeps beside the name: "<issuer> <subject>" (an issuer URL has no spaces); None for
        a typed name."""
        return f"{self.issuer} {self.subject}" if self.subject is not None else None

    @classmethod
    def stored(cls, name: str, person_id: str | None) -> Person:
        """The person a row names: its name column and its person id column (None: typed)."""
        if not person_id:
            return cls(name)
        issuer, _, subject = person_id.partition(" ")
        return cls(name, subject=subject, issuer=issuer)

    def __str__(self) -> str:
        return self.name


Actor = Person | str  # a str is a typed name (the CLI without sign-in, imports, tests)


def as_person(actor: Actor) -> Person:
    return actor if isinstance(actor, Person) else Person(actor.strip())


def same_person(a: Actor, b: Actor) -> bool:
    """Two signed-in people are one when their issuer and subject are; otherwise their names decide."""
    a, b = as_person(a), as_person(b)
    if a.signed_in and b.signed_in:
        return (a.issuer, a.subject) == (b.issuer, b.subject)
    return a.name.strip().casefold() == b.name.strip().casefold()


@dataclass(frozen=True)
class SignedIn:
    person: Person
    groups: tuple[str, ...]


def signed_in_person(
    claims: dict, *, issuer: str, client_id: str, now: float, groups_claim: str = "groups"
) -> SignedIn | str:
    """The person an ID token's claims (as the session keeps them) name, or why they are not accepted, in words.

    Streamlit checks the token at sign-in; this is checked on every run, so a session minted for another provider or
    application (the same cookie secret, another configuration) or past its token's expiry names no one."""
    iss, aud, exp, sub = claims.get("iss"), claims.get("aud"), claims.get("exp"), claims.get("sub")
    if iss != issuer:
        return f"This sign-in was issued by {iss!r}, not by this dashboard's provider ({issuer}). Sign in again."
    if client_id not in (aud if isinstance(aud, list) else [aud]):
        return f"This sign-in was issued for another application ({aud!r}), not this dashboard. Sign in again."
    if not isinstance(exp, int | float) or now >= exp:
        return "Your session has ended (its sign-in expired). Sign in again."
    if not isinstance(sub, str) or not sub or len(sub) > SUBJECT_MAX or len(iss) > ISSUER_MAX:
        return "This sign-in names no subject. Sign in again."
    email = claims.get("email") if isinstance(claims.get("email"), str) else None
    name = next(
        (
            str(v)
            for v in (claims.get("name"), email, claims.get("preferred_username"), sub)
            if isinstance(v, str) and v.strip()
        ),
        sub,
    )
    groups = claims.get(groups_claim) or []
    groups = groups if isinstance(groups, list) else [groups]
    shown = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())[:120] or sub[:120]
    return SignedIn(Person(shown, subject=sub, issuer=iss, email=email), tuple(str(g) for g in groups))
