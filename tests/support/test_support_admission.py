"""The legacy ownership rule: decoys, punctuation, whitespace and case, and a property-based check."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import demo_data
from dashboard.queue_files import load_rows
from dashboard.support.admission import AmbiguousName, Verdict, admits, judge, marker
from dashboard.support.customers import customer_tag, name_key, tag_collisions
from dashboard.support.models import Customer, SupportInteraction

HISTORY = {item.id: item for item in load_rows(demo_data.SUPPORT_HISTORY, SupportInteraction)}


def text(doc_id: str) -> str:
    return HISTORY[doc_id].text


def test_ann_lee_never_gets_ann_leeds_records():
    for doc in ("SUP-L-003", "SUP-L-004"):
        verdict = judge(text(doc), [], "Ann Lee")
        assert verdict.verdict is Verdict.OTHER_CUSTOMER_MARKER
        assert "Ann Leeds" in verdict.reason
    assert admits(text("SUP-L-003"), [], "Ann Leeds")
    assert admits(text("SUP-L-001"), [], "Ann Lee") and admits(text("SUP-L-002"), [], "Ann Lee")
    # and the other way round: a shorter name never owns the longer one's record, nor a suffix
    assert not admits(text("SUP-L-001"), [], "Ann Leeds")
    assert not admits(text("SUP-L-001"), [], "Lee")
    assert not admits(text("SUP-L-001"), [], "Ann")


def test_name_mid_text_marker_not_at_start_and_summary_are_rejected():
    assert judge(text("SUP-L-004"), [], "Ann Lee").verdict is Verdict.OTHER_CUSTOMER_MARKER  # mentions Ann Lee mid-text
    late = judge(text("SUP-L-005"), [], "Ann Lee")
    assert late.verdict is Verdict.MARKER_NOT_AT_START and "this customer's marker" in late.reason
    summary = judge(text("SUP-L-006"), [], "Ann Lee")
    assert summary.verdict is Verdict.NO_MARKER and "summary" in summary.reason
    assert judge(" " + text("SUP-L-001"), [], "Ann Lee").verdict is Verdict.MARKER_NOT_AT_START


def test_tagged_records_are_never_legacy_evidence():
    tagged_for_chen = judge(text("SUP-T-004"), [customer_tag("Chen Wei")], "Ann Lee")
    assert tagged_for_chen.verdict is Verdict.TAGGED_FOR_OTHER and "customer:chen-wei" in tagged_for_chen.reason
    # even a record whose text carries Ann Lee's marker is not admitted when tagged for someone else
    assert judge(text("SUP-L-001"), ["customer:someone-else"], "Ann Lee").verdict is Verdict.TAGGED_FOR_OTHER
    assert judge(text("SUP-L-001"), [customer_tag("Ann Lee")], "Ann Lee").verdict is Verdict.TAGGED_FOR_THIS_CUSTOMER


@pytest.mark.parametrize(
    "name, doc",
    [
        ("Sean O'Brien", "SUP-L-007"),
        ("A.J. Smith (UK)", "SUP-L-008"),
        ("Jo+Co Design", "SUP-L-010"),
        ("Dr. Kwame Mensah", "SUP-L-011"),
    ],
)
def test_names_with_punctuation_are_literal(name, doc):
    assert admits(text(doc), [], name)
    assert judge(text(doc), [], name).reason.startswith("untagged and starts with the marker")


def test_punctuation_is_not_a_pattern():
    # "." must not match any character, "+" must not mean "one or more", "(" must not group
    assert not admits("Customer AxJ. Smith (UK) contacted support.", [], "A.J. Smith (UK)")
    assert not admits("Customer Jooo+Co Design contacted support.", [], "Jo+Co Design")
    assert not admits("Customer JoCo Design contacted support.", [], "Jo+Co Design")
    assert not admits(text("SUP-L-013"), [], "Jo+Co Design")  # "Jo Co Design": an unknown customer
    assert not admits(text("SUP-L-009"), [], "A.J. Smith (UK)")  # "A J Smith"
    assert not admits(text("SUP-L-008"), [], "A J Smith")


def test_whitespace_and_case_in_the_marker_are_tolerated():
    assert "CONTACTED" in text("SUP-L-008")  # the demo decoy really differs in case and spacing
    assert admits(text("SUP-L-008"), [], "A.J. Smith (UK)")
    assert admits("CUSTOMER ann\n lee Contacted   Support. issue", [], "Ann Lee")
    assert admits("Customer Ann Lee contacted support.", [], "  ann   LEE ")
    assert not admits("Customer Ann Lee contacted support", [], "Ann Lee")  # the full stop is part of the marker


def test_unusable_names_are_refused():
    with pytest.raises(AmbiguousName):
        judge("Customer x contacted support.", [], "   ")
    with pytest.raises(AmbiguousName):
        judge("Customer x contacted support.", [], "X contacted support. Y")


def test_directory_customers_never_share_a_tag():
    customers = load_rows(demo_data.CUSTOMERS, Customer, id_field="name")
    assert tag_collisions([c.name for c in customers]) == {}
    assert tag_collisions(["Jo+Co Design", "Jo Co Design", "Ann Lee"]) == {
        "customer:jo-co-design": ["Jo+Co Design", "Jo Co Design"]
    }


# -- property: a record of one customer is never admitted for another ---------------------------
NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüßØ.()+'- "
# A customer name has a letter (customer_tag needs one); names that contain "contacted support." are
# refused by the rule (AmbiguousName): neither is generated.
names = st.text(alphabet=NAME_ALPHABET, min_size=1, max_size=24).filter(
    lambda n: any(ch.isalnum() for ch in n) and "contacted support." not in " ".join(n.split()).casefold()
)


@settings(max_examples=300, deadline=None)
@given(
    owner=names,
    other=names,
    spacing=st.sampled_from([" ", "  ", "\t", "\n "]),
    body=st.text(max_size=40),
    upper=st.booleans(),
)
def test_property_a_record_is_never_admitted_for_another_name(owner, other, spacing, body, upper):
    if name_key(owner) == name_key(other):
        return  # the same customer for this rule (only spacing/case differ)
    record = f"Customer{spacing}{spacing.join(owner.split())}{spacing}contacted support.\n\n{body}"
    if upper:
        record = record.upper()
    if not upper:
        assert admits(record, [], owner)  # the owner's own record is admitted: the rule is not vacuous
    assert not admits(record, [], other), (owner, other, record)


@settings(max_examples=300, deadline=None)
@given(owner=names, body=st.text(max_size=40))
def test_property_the_owner_is_always_admitted(owner, body):
    assert admits(marker(owner) + "\n\n" + body, [], owner)
    assert not admits(marker(owner) + body, ["customer:x"], owner)
