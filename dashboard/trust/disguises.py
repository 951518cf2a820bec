"""What the screen (trust/screen.py) sees through before its word rules read a text. Pure, no I/O beyond reading the
packaged list once.

- Look-alike letters from Unicode's own list of confusables (confusables.txt, as the maintained
  `confusable-homoglyphs` package ships it): each letter that looks like an ASCII letter or digit is read as it
  (dotless i, Latin alpha, Armenian o, Cyrillic and Greek letters ...), and Latin small capitals as their letter.
- Base64 cut into short pieces: neighbouring pieces that look encoded (a digit, an inner capital, + or /, a length
  of four's multiple) are joined and decoded; only a decoding that reads as words counts.
- ROT13: a text holding the ROT13 form of a steering word is read again turned back.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
import unicodedata
from collections import deque
from functools import lru_cache
from importlib import resources

_SMALL_CAPITAL = re.compile(r"^LATIN (?:LETTER )?SMALL CAPITAL ([A-Z])$")
_DOTLESS = re.compile(r"^LATIN SMALL LETTER DOTLESS ([IJ])$")


@lru_cache(maxsize=1)
def confusables() -> dict[int, str]:
    """code point -> the ASCII letter or digit it is confusable with (lower case), for every letter Unicode's list
    links to one (through at most three links), and the Latin small capitals and dotless letters by their names."""
    links: dict[str, list[str]] = {
        ch: [h["c"] for h in found]
        for ch, found in json.loads(
            resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
        ).items()
    }
    mapped: dict[int, str] = {}
    for ch in links:
        if len(ch) != 1 or ch.isascii() or not unicodedata.category(ch).startswith("L"):
            continue
        if (target := _nearest_ascii(ch, links)) is not None:
            mapped[ord(ch)] = target
    for code in range(0x80, 0x10000):
        name = unicodedata.name(chr(code), "")
        if found := _SMALL_CAPITAL.match(name) or _DOTLESS.match(name):
            mapped.setdefault(code, found.group(1).lower())
    return mapped


def _nearest_ascii(start: str, links: dict[str, list[str]], depth: int = 3) -> str | None:
    """The closest ASCII letter (else digit) the list links `start` to."""
    seen, queue, digits = {start}, deque([(start, 0)]), None
    while queue:
        ch, hops = queue.popleft()
        for other in links.get(ch, ()):
            if len(other) == 1 and other.isascii() and other.isalnum():
                if other.isalpha():
                    return other.lower()
                digits = digits or other
            elif hops + 1 < depth and other not in seen:
                seen.add(other)
                queue.append((other, hops + 1))
    return digits


# -- encoded pieces ------------------------------------------------------------------------------------------------

_B64_PIECE = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{4,}={0,2}(?![A-Za-z0-9+/=])")
_B64_GAP = re.compile(r"[\s,;:|.\-_'\"()\[\]]{1,3}")
_B64_MIN = 12  # characters of base64 in a run of pieces: three pieces of four (nine bytes)


def _encoded_looking(piece: str) -> bool:
    core = piece.rstrip("=")
    return (len(piece) % 4 == 0 or piece.endswith("=")) and (
        any(c.isdigit() or c in "+/" for c in core) or any(c.isupper() for c in core[1:])
    )


def _reads_as_words(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or not text.isprintable():
        return None
    wordy = sum(c.isalpha() or c.isspace() for c in text) / len(text)
    return text if wordy >= 0.85 and len(re.findall(r"[^\W\d_]{3,}", text)) >= 2 else None


def base64_pieces(text: str) -> list[tuple[int, int, str]]:
    """(start, end, what it decodes to) of each run of neighbouring base64-looking pieces that decodes to words."""
    found, run = [], []
    pieces = [m for m in _B64_PIECE.finditer(text) if _encoded_looking(m.group())]
    for piece in [*pieces, None]:
        if piece is not None and run and _B64_GAP.fullmatch(text[run[-1].end() : piece.start()]):
            run.append(piece)
            continue
        joined = "".join(p.group().rstrip("=") for p in run)
        if len(joined) >= _B64_MIN:
            try:
                decoded = _reads_as_words(base64.b64decode(joined + "=" * (-len(joined) % 4), validate=True))
            except (binascii.Error, ValueError):
                decoded = None
            if decoded:
                found.append((run[0].start(), run[-1].end(), decoded))
        run = [piece] if piece is not None else []
    return found


# The ROT13 forms of words that steer an agent: a text holding one is read again, turned back.
_ROT13_STEMS = tuple(
    codecs.encode(word, "rot13")
    for word in (
        "ignore",
        "disregard",
        "instruction",
        "approve",
        "previous",
        "supersede",
        "override",
        "always",
        "policy",
        "agent",
    )
)


def rot13_suspect(folded: str) -> bool:
    """Whether a (case-folded) text holds the ROT13 form of a steering word."""
    return any(stem in folded for stem in _ROT13_STEMS)


def rot13(text: str) -> str:
    """The text turned back from ROT13 (the same length: a phrase found in it is cut from the original at the same place)."""
    return codecs.encode(text, "rot13")
