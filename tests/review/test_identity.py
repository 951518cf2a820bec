"""Who acted, as the four-eyes rules see it: a signed-in person is the provider's subject at its issuer, whatever
they are called today; a typed name is compared as a name, and never taken for someone else than a signed-in person
of the same name. A session's claims are checked against the configured issuer, client id and expiry."""

from __future__ import annotations

import pytest

from dashboard.access.limits import ApprovalLimits
from dashboard.finance.policy import Recommendation
from dashboard.review.casework import Casework
from dashboard.review.curation import Curation
from dashboard.store.db import make_engine
from dashboard.store.errors import Refused
from dashboard.store.identity import Person, SignedIn, same_person, signed_in_person
from tests.helpers import demo_case, exception_proposal

ISSUER, OTHER = "https://id.example.com", "https://id.other.example"
DANA = Person("Dana Reviewer", subject="u-1", issuer=ISSUER, email="dana@example.com")
DANA_RENAMED = Person("Dana R. Smith", subject="u-1", issuer=ISSUER)
ANOTHER_DANA = Person("Dana Reviewer", subject="u-2", issuer=ISSUER)
NOW = 1_800_000_000


def claims(**changed) -> dict:
    return {
        "iss": ISSUER,
        "aud": "recall-review",
        "sub": "u-1",
        "exp": NOW + 60,
        "name": "Dana Reviewer",
        "email": "dana@example.com",
        "groups": ["ap-reviewers"],
        **changed,
    }


def accepted(**changed) -> SignedIn | str:
    return signed_in_person(claims(**changed), issuer=ISSUER, client_id="recall-review", now=NOW)


def test_one_subject_is_one_person_whatever_its_name_and_one_name_is_two_people_with_two_subjects():
    assert same_person(DANA, DANA_RENAMED)
    assert not same_person(DANA, ANOTHER_DANA)
    assert not same_person(DANA, Person("Dana Reviewer", subject="u-1", issuer=OTHER))  # the subject is the issuer's
    assert same_person(DANA, " dana reviewer ")  # a typed name equal to a signed-in person's name: refused as the same
    assert same_person("Lee", "LEE") and not same_person("Lee", "Lea")
    assert Person.stored(DANA.name, DANA.id) == Person("Dana Reviewer", subject="u-1", issuer=ISSUER)


def test_a_sessions_claims_name_the_person_or_say_why_not():
    me = accepted()
    assert isinstance(me, SignedIn) and me.person == DANA and me.groups == ("ap-reviewers",)
    assert (
        accepted(iss=OTHER)
        == f"This sign-in was issued by {OTHER!r}, not by this dashboard's provider ({ISSUER}). Sign in again."
    )
    assert accepted(aud=["another-app"]).startswith("This sign-in was issued for another application (['another-app'])")
    assert isinstance(accepted(aud=["another-app", "recall-review"]), SignedIn)
    assert accepted(exp=NOW) == "Your session has ended (its sign-in expired). Sign in again."
    assert accepted(exp=None) == "Your session has ended (its sign-in expired). Sign in again."
    assert accepted(sub="") == "This sign-in names no subject. Sign in again."


def test_a_providers_name_is_kept_as_plain_text_without_control_characters_and_within_the_limit():
    me = accepted(name="<b>Dana</b>\x00\n **Reviewer** " + "x" * 200)
    assert me.person.name == ("<b>Dana</b> **Reviewer** " + "x" * 200)[:120]
    assert accepted(name=None, email=None, preferred_username="dana").person.name == "dana"
    assert accepted(name=None).person.name == "dana@example.com"


def test_a_second_approval_compares_subjects_and_a_limit_can_name_an_email(scratch_service):
    service = scratch_service(limits=ApprovalLimits({"reviewer": 10000, "lead": 50000, "dana@example.com": 50000}))
    rec = Recommendation(action="approve", confidence=0.9, cited=[], rationale="r", policy="precedent")
    proposal = exception_proposal(demo_case("E-1004"), rec, DANA_RENAMED.name).by(DANA_RENAMED)  # 14,250.00
    assert service.decide("bank", "reviewer", proposal).held_because  # the name has no limit of its own
    held = service.held("bank", "exception", "E-1004")
    assert (
        service.approval_problem(held, DANA, "lead")
        == "Dana R. Smith proposed this decision; the second approver must be someone else."
    )
    with pytest.raises(Refused, match="the second approver must be someone else"):
        service.second_approval("bank", "lead", "exception", "E-1004", DANA, confirm=True)
    assert service.approval_problem(held, ANOTHER_DANA, "lead") is None
    assert (
        service.second_approval("bank", "lead", "exception", "E-1004", ANOTHER_DANA, confirm=True).stored.state
        != "awaiting_approval"
    )
    steps = service.approvals.trail("bank", "exception", "E-1004")[0].steps
    assert [(s.actor, s.person_id) for s in steps] == [
        ("Dana R. Smith", f"{ISSUER} u-1"),
        ("Dana Reviewer", f"{ISSUER} u-2"),
    ]
    limits = ApprovalLimits({"dana@example.com": 50000})
    assert (
        limits.limit_for(DANA, "reviewer").amount == 50000 and limits.limit_for(ANOTHER_DANA, "reviewer").amount is None
    )


def test_curation_and_claims_compare_subjects(tmp_path):
    engine = make_engine(None, tmp_path)
    curation = Curation(engine)
    proposal = curation.propose("bank", "doc-1", role="reviewer", proposer=DANA, reason="outdated", label="outdated")
    with pytest.raises(Refused, match="Dana R. Smith proposed this"):
        curation.approve(proposal.id, role="lead", lead=DANA_RENAMED)
    approval, _ = curation.approve(proposal.id, role="lead", lead=ANOTHER_DANA)
    assert (approval.actor, approval.person_id) == ("Dana Reviewer", f"{ISSUER} u-2")

    casework = Casework(engine)
    assert casework.claim("bank", "exception", "E-1", DANA).held_by(DANA_RENAMED)
    assert not casework.claim("bank", "exception", "E-1", ANOTHER_DANA).held_by(ANOTHER_DANA)  # Dana's lease holds
    assert not casework.release("bank", "exception", "E-1", ANOTHER_DANA) and casework.release(
        "bank", "exception", "E-1", DANA_RENAMED
    )
