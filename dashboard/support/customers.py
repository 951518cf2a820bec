"""A customer's name as shown and as matched, and the one function that turns it into their Hindsight tag,
for retain and recall.

Normalisation: Unicode NFKC, case-folded, and every run of characters that are not letters or digits
(spaces, punctuation, symbols) becomes a single '-', trimmed at both ends:
"A.J. Smith (UK)" -> "customer:a-j-smith-uk", "Sean O'Brien" -> "customer:sean-o-brien".
Changing this function strands every memory under the old tags: treat it as a migration.
"""

from __future__ import annotations

import re
import unicodedata

TAG_PREFIX = "customer:"
_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)


def display_name(name: str) -> str:
    """A customer's name as written once its whitespace runs are collapsed: "  Ann   Lee " -> "Ann Lee"."""
    return " ".join(name.split())


def name_key(name: str) -> str:
    """The identity of a name for matching: whitespace collapsed and case-folded."""
    return display_name(name).casefold()


def customer_tag(name: str) -> str:
    slug = _SEPARATORS.sub("-", unicodedata.normalize("NFKC", name).casefold()).strip("-")
    if not slug:
        raise ValueError(f"customer name {name!r} has no letters or digits to make a tag from")
    return TAG_PREFIX + slug


def tag_collisions(names: list[str]) -> dict[str, list[str]]:
    """Tags that two or more distinct directory names map to (tag -> names); empty when the directory is safe.

    Two customers sharing a tag would share memories: a directory with a collision must be fixed
    (rename one customer) before anything is retained or migrated under these tags.
    """
    by_tag: dict[str, list[str]] = {}
    for name in names:
        by_tag.setdefault(customer_tag(name), []).append(name)
    return {tag: found for tag, found in by_tag.items() if len(found) > 1}
