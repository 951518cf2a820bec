"""A deterministic screen over a memory record's original text: does it try to steer the agent that recalls it?

Anyone who can write to a bank can write a record that talks to the agent (hindsight issues #3558/#3562): commands,
"ignore earlier entries", "this supersedes ...", a forged policy, a claimed authority, a trigger for later, encoded
or hidden text, a claimed customer identity. `screen(text)` names each rule a text breaks and the phrase that broke
it; it never drops or rewrites the record: what happens to a flagged record is the policy's call.

It reads the document's text as retained (in both server modes, never a fact the server rewrote). Before the word
rules match, the text is normalised so that disguises do not help: compatibility forms folded (NFKD: fullwidth
letters, ligatures; accents dropped), case-folded, a few Cyrillic and Greek look-alikes mapped to Latin, invisible
characters removed (and reported under `hidden_markup`), Unicode tag characters read as the ASCII they smuggle, and
whitespace collapsed (line breaks kept, for the rules about a line's start). Look-alike letters come from Unicode's own
list of confusables (trust/disguises.py); words spelled out letter by letter or cut by hyphens or dots ("i g n o r e",
"ig-nore", "d.i.s.r.e.g.a.r.d") are read joined; base64 cut into short pieces and ROT13 are read decoded; a few
instructions in German, French and Chinese are named. Every phrase is cut from the original text, with invisible
characters written out ("<U+200B>"). Pure: no Streamlit, no I/O.

`screen_record` reads the other places a writer can put words too (context, metadata values, tags, the document id)
and says where each flag was found. The screen helps people see; what keeps a decision safe, whatever language or
spelling a record uses, is that a record of unknown origin never decides (finance/policy.py).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from dashboard.trust.disguises import base64_pieces, confusables, rot13, rot13_suspect

PHRASE_MAX = 80

# Characters that render as nothing (or reorder what is shown). Stripped before the word rules match.
_INVISIBLE = (
    "\x00-\x08\x0e-\x1b\x7f\x80-\x84\x86-\x9f"  # control characters (tab, line breaks and separators are whitespace)
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e"  # soft hyphen, grapheme joiner, fillers, Mongolian separator
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"  # zero-width, joiners, bidi marks, embeddings, isolates
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f"  # fillers, variation selectors, BOM, tag characters
)
INVISIBLE = re.compile(f"[{_INVISIBLE}]")
# Invisible characters that are flagged. Joiners and LRM/RLM are legitimate in emoji sequences and in Indic or RTL
# names: flagged only next to an ASCII letter or digit (inside an English word). Variation selectors are never flagged.
_ALWAYS_HIDDEN = _INVISIBLE.replace("\u200b-\u200f", "\u200b").replace("\ufe00-\ufe0f", "")
_HIDDEN_CHARS = re.compile(f"[{_ALWAYS_HIDDEN}]|(?<=[A-Za-z0-9])[\u200c-\u200f]|[\u200c-\u200f](?=[A-Za-z0-9])")
_TAG_CHARS = range(0xE0020, 0xE007F)  # Unicode tag characters: an ASCII payload nobody sees ("ASCII smuggling")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_WHITESPACE = re.compile(r"\s+")
# Look-alikes NFKD leaves alone (Cyrillic, Greek), typographic quotes and dashes: mapped for the word rules only.
_CONFUSABLES = str.maketrans(
    {
        "а": "a",
        "в": "b",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "һ": "h",
        "ӏ": "l",
        "ԛ": "q",
        "ԝ": "w",
        "к": "k",
        "м": "m",
        "т": "t",
        "н": "h",
        "α": "a",
        "ε": "e",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
    }
)


@lru_cache(maxsize=1)
def _lookalikes() -> dict[int, str]:
    """Unicode's confusables (trust/disguises.py) with the hand-made map above on top (quotes, dashes)."""
    return {**confusables(), **_CONFUSABLES}


class Flag(BaseModel):
    """One rule a record's text breaks: its id, what it means in plain words, and the phrase that broke it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    label: str
    phrase: str
    where: str = (
        "text"  # the record's text, or its context, a metadata value ('metadata "note"'), a tag, its document id
    )


# --- normalisation, with the way back to the original text -------------------------------------------------------


@dataclass(frozen=True)
class View:
    """A normalised form of a text, and the way from each of its characters back to the original one."""

    text: str
    origin_of: Callable[[int], int]  # index in `text` -> index in the original text

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.origin_of(start), self.origin_of(end - 1) + 1


@lru_cache(maxsize=4096)
def _char(ch: str, fold: bool) -> str:
    if INVISIBLE.match(ch):
        code = ord(ch)
        return chr(code - 0xE0000).casefold() if fold and code in _TAG_CHARS else ""
    out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return out.casefold().translate(_lookalikes()) if fold else out


def view(text: str, fold: bool = True) -> View:
    """`fold`: case-folded with look-alikes mapped (the word rules); else only compatibility-folded (encoded text,
    where case matters). Both drop invisible characters and collapse whitespace to one space, or one line break."""
    if text.isascii() and not INVISIBLE.search(text):  # most records: nothing to fold but case (4x faster)
        return _collapsed(text.lower() if fold else text)
    return _folded(text, fold)


def _collapsed(text: str) -> View:
    """Whitespace runs collapsed; the way back is kept as the start of each stretch copied as it is (no list per
    character: most texts are screened and never matched)."""
    chars: list[str] = []
    starts, origins = [0], [0]  # each stretch: where it starts in the view, and in the original
    done = 0
    for run in _WHITESPACE.finditer(text):
        chars += [text[done : run.start()], "\n" if _LINE_BREAKS.intersection(run.group()) else " "]
        at = starts[-1] + run.start() - origins[-1]  # the collapsed run's index in the view
        starts += [at, at + 1]
        origins += [run.start(), run.end()]
        done = run.end()
    chars.append(text[done:])
    return View("".join(chars), lambda i: origins[(k := bisect_right(starts, i) - 1)] + i - starts[k])


def _folded(text: str, fold: bool) -> View:
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in _char(ch, fold):
            if c.isspace():
                c = "\n" if c in _LINE_BREAKS else " "
                if chars and chars[-1] in " \n":
                    chars[-1] = "\n" if "\n" in (c, chars[-1]) else " "
                    continue
            chars.append(c)
            origin.append(i)
    return View("".join(chars), tuple(origin).__getitem__)


def shown(text: str) -> str:
    """A text as a phrase shows it: invisible characters written out as <U+XXXX>, whitespace runs as one space."""
    visible = INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
    return " ".join(visible.split())


def _phrase(text: str, start: int, end: int) -> str:
    phrase = shown(text[start:end])
    if len(phrase) <= PHRASE_MAX:
        return phrase
    cut = phrase[: PHRASE_MAX - 1]
    if (open_at := cut.rfind("<U+")) > cut.rfind(">"):  # never cut an invisible character's name in half
        cut = cut[:open_at]
    return cut.rstrip() + "…"


# --- finders: each returns the first span (in the original text) it matches, or None ----------------------------


_INNER_MARK = re.compile(r"(?<=[^\W\d_])[-_.\u00b7\u2022*](?=[^\W\d_])")  # ig-nore, d.i.s.r.e.g.a.r.d
_SPELLED_GAP = re.compile(r"(?<=\b[^\W\d_]) (?=[^\W\d_]\b)")  # one space between single letters: i g n o r e
_SPACE_AFTER_SPACE = re.compile(r"(?<= ) +")


def _without(seen: View, pattern: re.Pattern) -> View:
    """`seen` without the characters `pattern` matches, each kept character still leading back to the original."""
    drop = {i for m in pattern.finditer(seen.text) for i in range(m.start(), m.end())}
    if not drop:
        return seen
    kept = [i for i in range(len(seen.text)) if i not in drop]
    return View("".join(seen.text[i] for i in kept), tuple(seen.origin_of(i) for i in kept).__getitem__)


def _joined(text: str) -> View | None:
    """The folded text with words spelled out letter by letter, or cut by hyphens or dots, joined again; None when the
    text has none."""
    chars, origin = [], []
    for i, ch in enumerate(text):
        for c in _char(ch, True):
            chars.append(" " if c.isspace() else c)
            origin.append(i)
    seen = View("".join(chars), tuple(origin).__getitem__)
    if not (_INNER_MARK.search(seen.text) or _SPELLED_GAP.search(seen.text)):
        return None
    return _without(_without(_without(seen, _INNER_MARK), _SPELLED_GAP), _SPACE_AFTER_SPACE)


class Views:
    """The forms of one text the rules read, each built once."""

    def __init__(self, text: str):
        self.raw = View(text, int)  # the original itself
        self.folded = view(text, fold=True)
        self.plain = view(text, fold=False)
        self._joined: View | None | bool = False

    @property
    def joined(self) -> View | None:
        if self._joined is False:
            self._joined = _joined(self.raw.text)
        return self._joined

    def forms(self, form: str) -> list[View]:
        """The views a finder on `form` reads: the folded text, and its joined form when it differs."""
        if form != "folded":
            return [getattr(self, form)]
        return [self.folded] if self.joined is None else [self.folded, self.joined]


Finder = Callable[[Views], "tuple[int, int] | None"]


def _regex(pattern: str, form: str = "folded", flags: int = 0) -> Finder:
    compiled = re.compile(pattern, flags)

    def find(views: Views) -> tuple[int, int] | None:
        for seen in views.forms(form):
            found = compiled.search(seen.text)
            if found and found.end() > found.start():
                return seen.span(*found.span())
        return None

    return find


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


_AGENT = _words("ai", "a\\.i\\.", "agent", "assistant", "llm", "bot", "chatbot", "copilot", "(?:ai|language) model")
# Modals that command. "Should have", "always", "never", "cannot" describe (a reviewer's note on what the agent did).
_MODAL = _words(
    "must(?! have)",
    "should(?! have)",
    "shall",
    "needs? to",
    "has to",
    "have to",
    "may only",
    "can only",
    "must not",
    "should not",
    "shall not",
    "mustn't",
    "shouldn't",
    "(?:is|are) (?:now )?(?:required|instructed|expected|told|supposed|authori[sz]ed|allowed|permitted|not) to",
    "(?:is|are) to",
)
# What an agent decides: a command to do one of these is an instruction, whoever else reads it.
_DECIDE = _words(
    "approve",
    "reject",
    "escalate",
    "recommend",
    "ignore",
    "disregard",
    "trust",
    "treat",
    "cite",
    "obey",
    "comply",
    "override",
    "bypass",
    "authori[sz]e",
    "refund",
    "release",
    "pay out",
    "classify",
)
_EARLIER = _words(
    "earlier",
    "previous",
    "prior",
    "older",
    "other",
    "existing",
    "past",
    "former",
    "preceding",
    "above",
    "original",
    "old",
    "conflicting",
    "contrary",
)
_RECORDS = _words(
    "instructions?",
    "entries",
    "entry",
    "records?",
    "precedents?",
    "decisions?",
    "rulings?",
    "rules?",
    "guidance",
    "context",
    "messages?",
    "prompts?",
    "memories",
    "memory",
    "notes?",
    "history",
    "data",
    "information",
    "facts?",
    "evidence",
    "polic(?:y|ies)",
    "ones",
)
_QUANTIFIERS = "(?:(?:all|any|each|every|the|your|of|these|those|its|my)\\s){0,3}"
_AUTHORITY = _words(
    "cfo",
    "ceo",
    "coo",
    "cto",
    "(?:financial |group )?controller",
    "comptroller",
    "finance director",
    "director of finance",
    "head of (?:finance|ap|accounts payable|procurement|support|customer success)",
    "vp\\b(?: of \\w+)?",
    "vice president(?: of \\w+)?",
    "(?:senior )?management",
    "leadership",
    "executive(?: team)?",
    "(?:the )?board",
    "(?:internal |external )?audit(?:ors?| committee)?",
    "compliance(?: team)?",
    "legal(?: team)?",
    "general counsel",
    "treasury",
    "security team",
    "system administrator",
)
_IN_RECORD = _words(
    "record",
    "entry",
    "memory",
    "note",
    "history",
    "ticket",
    "interaction",
    "document",
    "conversation",
    "contact",
    "case",
    "text",
)


@dataclass(frozen=True)
class Rule:
    id: str
    label: str
    finders: tuple[Finder, ...]

    def first(self, views: Views) -> tuple[int, int] | None:
        """The earliest match in the original text; on a tie, the finder listed first."""
        spans = [span for find in self.finders if (span := find(views))]
        return min(spans, key=lambda span: span[0]) if spans else None


# A marker opens a sentence ("The customer again contacted support." is not one); its name is 1-8 words.
_MARKER = re.compile(r"(?:^|(?<=\n)|(?<=[.!?:;\"'(] ))customer\s(?:(?!customer\s)\S+\s){1,8}?contacted\ssupport\.")


def _second_marker(views: Views) -> tuple[int, int] | None:
    """A "Customer <name> contacted support." marker other than the one the legacy ownership rule reads at the very
    start: a second marker, or one opening a later line. (One after a prefix on the first line, "Escalation note:
    Customer ...", is a known legacy form the ownership rule already rejects: not a claim.)"""
    text = views.folded.text
    markers = list(_MARKER.finditer(text))
    for n, found in enumerate(markers):
        at_line_start = found.start() > 0 and text[found.start() - 1] == "\n"
        if n > 0 or at_line_start:
            return views.folded.span(*found.span())
    return None


def _hidden_characters(views: Views) -> tuple[int, int] | None:
    """The word (run of non-space characters) around the first flagged invisible character."""
    text = views.raw.text
    found = _HIDDEN_CHARS.search(text)
    if not found:
        return None
    start, end = found.start(), found.end()
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end


def _base64_pieces(views: Views) -> tuple[int, int] | None:
    """A run of short base64 pieces that decodes to words."""
    found = base64_pieces(views.raw.text)
    return found[0][:2] if found else None


_STEERING = ("instruction", "ignore_previous", "supersedes", "forged_policy", "authority_claim")


def _rot13(views: Views) -> tuple[int, int] | None:
    """Words in ROT13 that, turned back, steer the agent: the span where they are (ROT13 keeps every position)."""
    if not rot13_suspect(views.folded.text):
        return None
    turned = Views(rot13(views.raw.text))
    spans = [span for rule in RULES if rule.id in _STEERING if (span := rule.first(turned))]
    return min(spans) if spans else None


# Instructions in a few other languages (read accent-free, as the folded text is).
_IGNORE_ELSEWHERE = (
    r"\bignorier\w*\s(?:\w+\s){0,2}?(?:vorherig|fruher|bisherig|vorig|alt)\w*\s(?:\w+\s)?(?:anweisung|eintrag|eintrage|entscheidung|regel|notiz)\w*",
    r"\b(?:vorherig|fruher|bisherig|vorig)\w*\s(?:anweisung|eintrag|eintrage|entscheidung|regel)\w*\s(?:\w+\s)?ignorier\w*",
    r"\bignor(?:e|ez|er)\s(?:\w+\s){0,2}?(?:instructions?|entrees?|decisions?|consignes?|notes?|regles?|precedents?)\s(?:precedent(?:e|es|s)?|anterieur(?:e|es|s)?)\b",
    r"\bignora(?:r|d)?\s(?:\w+\s){0,2}?(?:instrucciones|entradas|decisiones|registros)\s(?:anteriores|previas)\b",
    r"忽略(?:之前|以前|先前|上面|以上|前面|早前)(?:的)?(?:所有|全部)?(?:的)?(?:记录|指令|说明|指示|决定|内容|规则)",
)
_ALWAYS_APPROVE_ELSEWHERE = (
    r"\b(?:immer|stets)\s(?:\w+\s){0,2}?genehmig\w*|\bgenehmig\w*\s(?:\w+\s){0,2}?immer\b",
    r"\btoujours\sapprouver\b|\bapprouve(?:z|r)?\stoujours\b",
    r"(?:总是|一律|始终|永远)(?:都)?批准",
)


_HTML_TAGS = _words(
    "a",
    "abbr",
    "audio",
    "b",
    "base",
    "body",
    "br",
    "button",
    "code",
    "del",
    "details",
    "div",
    "em",
    "embed",
    "font",
    "form",
    "h[1-6]",
    "head",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "label",
    "li",
    "link",
    "mark",
    "math",
    "meta",
    "noscript",
    "object",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "script",
    "section",
    "small",
    "source",
    "span",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "th",
    "title",
    "tr",
    "u",
    "ul",
    "video",
    "xml",
)

RULES: tuple[Rule, ...] = (
    Rule(
        "instruction",
        "addresses the agent with an instruction",
        (
            _regex(rf"\b(?:the|this|that|any|every|all|our|your|an?)\s(?:\w+\s)?{_AGENT}s?\s{_MODAL}\b"),
            _regex(
                rf"\byou\s(?:{_MODAL}|will now|may now|can now|are not to)\s(?:(?:now|always|never|only|also|simply|just)\s)?{_DECIDE}\b"
            ),
            _regex(rf"\byou\s(?:always|never|only)\s{_DECIDE}\b"),
            _regex(r"\bas\san?\s(?:ai|ai assistant|ai agent|language model|large language model|llm)\b"),
            _regex(r"(?m)^\s*(?:system|assistant|developer|system prompt|ai)\s?:"),
            _regex(
                r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?inst\]|<<sys>>|^#{1,4}\s?(?:system|instructions?)\b",
                flags=re.MULTILINE,
            ),
            _regex(
                r"\b(?:new|updated|revised|important|additional|hidden|secret|override) (?:system )?instructions?\s?:"
            ),
            _regex(rf"\binstructions?\s(?:to|for)\s(?:the\s|any\s)?{_AGENT}s?\b"),
            _regex(
                r"\b(?:always|only|must|should|shall)\s(?:\w+\s)?(?:respond|reply|answer|say|output|return)\s(?:only\s)?with\b"
            ),
            _regex(r"\b(?:respond|reply|answer)\s(?:only\s)?with\s(?:exactly|only|the word|the phrase|\"|')"),
            # Directives that waive a control (release money, skip a check); the demo's "Always reject ..." holds money.
            _regex(r"\b(?:always|automatically)\s(?:approve|pay|release|accept|refund|grant|authori[sz]e|clear)\b"),
            _regex(r"\bnever\s(?:reject|escalate|flag|question|query|hold|block|refuse|deny|verify|report)\b"),
            _regex(r"\b(?:do\snot|don't|dont)\s(?:escalate|flag|reject|question|query|deny|verify|alert|notify)\b"),
            *(_regex(pattern) for pattern in _ALWAYS_APPROVE_ELSEWHERE),
        ),
    ),
    Rule(
        "ignore_previous",
        "tells the agent to ignore earlier records or instructions",
        (
            _regex(
                rf"\b(?:ignore|disregard|forget|discard|set aside|pay no attention to|(?:do not|don't) (?:follow|use|consider|trust|rely on))\s"
                rf"{_QUANTIFIERS}{_EARLIER}\s(?:\w+\s){{0,2}}?{_RECORDS}\b"
            ),
            _regex(
                r"\b(?:ignore|disregard|forget)\s(?:all\s)?(?:of\s)?(?:your|the|any|these|those)\s(?:instructions|system prompt|guidelines|rules)\b"
            ),
            _regex(
                r"\b(?:ignore|disregard|forget)\s(?:everything|all|anything)\s(?:above|before|else|prior|previously|you know)\b"
            ),
            *(_regex(pattern) for pattern in _IGNORE_ELSEWHERE),
        ),
    ),
    Rule(
        "supersedes",
        "claims to replace or outrank earlier records",
        (
            _regex(
                rf"\b(?:supersed(?:es?|ed|ing)|overrid(?:es?|ing|den)|replac(?:es?|ing)|invalidat(?:es?|ing)|voids?|cancels?|"
                rf"revokes?|obsoletes?|nullif(?:y|ies)|trumps?|outranks?)\s{_QUANTIFIERS}{_EARLIER}\s(?:\w+\s){{0,2}}?{_RECORDS}\b"
            ),
            _regex(r"\b(?:supersed(?:es|ing)|overrid(?:es|ing))\s(?:all|everything|anything)\b"),
            _regex(r"\b(?:takes?|taking|has|have|gets?)\s(?:\w+\s)?(?:precedence|priority)\s(?:over|above)\b"),
            _regex(
                r"\bonly\s(?:valid|correct|authoritative|current|applicable|binding|true|relevant|trusted)\s(?:\w+\s)?"
                r"(?:precedents?|records?|entry|entries|decisions?|sources?|rulings?|guidance|polic(?:y|ies))\b"
            ),
            _regex(
                rf"\b{_EARLIER}\s(?:\w+\s){{0,2}}?(?:entries|records|precedents|decisions|rulings|notes|guidance)\s"
                r"(?:are|were|is|has been|have been|should be|must be)\s(?:now\s)?(?:all\s)?(?:void|invalid|obsolete|outdated|"
                r"superseded|wrong|incorrect|revoked|cancell?ed|withdrawn|no longer valid|stale|null|overridden)\b"
            ),
            _regex(
                r"\b(?:latest|newest|most recent)\s(?:entry|record|decision|precedent|ruling|note)\s(?:wins|prevails|governs|overrides)\b"
            ),
        ),
    ),
    Rule(
        "forged_policy",
        "cites a policy or blanket approval the record cannot prove",
        (
            _regex(
                r"\b(?:new|updated|revised|amended|interim|emergency|temporary|changed)\s(?:\w+\s){0,3}?polic(?:y|ies)\b"
            ),
            _regex(r"\bpolicy\s(?:update|override|waiver)\b"),
            _regex(r"\bpre-?\s?(?:approved?|authori[sz]ed)\b"),
            _regex(r"\bauto-?\s?approv\w*|\bautomatically\sapprov\w*"),
            _regex(r"\b(?:blanket|standing|permanent)\s(?:approval|exemption|waiver|authori[sz]ation)\b"),
            _regex(
                r"\ball\s(?:\w+\s){0,4}?(?:variances?|exceptions?|invoices?|mismatch(?:es)?|discrepanc(?:y|ies)|refunds?|requests?|"
                r"charges?|differences?|overcharges?)\s(?:\w+\s){0,3}?(?:are|were|is|shall be|should be|must be|will be|can be|"
                r"may be|get|to be)\s(?:(?:now|hereby|automatically)\s)*(?:approved|accepted|exempt|waived|allowed|cleared|"
                r"pre-?approved|paid|payable|authori[sz]ed|refunded|granted)\b"
            ),
            _regex(
                r"\b(?:price |variance )?(?:tolerance|threshold|approval limit|three-way match(?:ing)?)s?\s(?:(?:has|have)\sbeen\s|is\s|are\s|was\s|were\s)?"
                r"(?:now\s)?(?:waived|removed|lifted|suspended|disabled)\b"
            ),
            _regex(
                r"\bno longer\s(?:requires?|needs?)\s(?:\w+\s){0,2}?(?:review|approval|escalation|matching|sign-?off|verification)\b"
            ),
        ),
    ),
    Rule(
        "authority_claim",
        "claims the authority of a senior person, a function or a verified reviewer",
        (
            _regex(
                rf"\b(?:approved|authori[sz]ed|signed\soff|sanctioned|mandated|instructed|ordered|directed|endorsed|ratified|"
                rf"cleared|confirmed|verified|validated)\s(?:in\swriting\s)?by\s(?:the\s|our\s)?{_AUTHORITY}\b"
            ),
            _regex(
                rf"\b(?:the\s|our\s){_AUTHORITY}\s(?:has\s|have\s)?(?:approved|authori[sz]ed|signed\soff|sanctioned|mandated|ordered|"
                rf"directed|instructed|decided|ruled)\b"
            ),
            _regex(
                rf"\b(?:on\sbehalf\sof|at\sthe\s(?:direction|request|instruction)\sof)\s(?:the\s|our\s)?{_AUTHORITY}\b"
            ),
            _regex(r"\bby\sorder\sof\b"),
            _regex(r"\b(?:verified|authenticated|trusted|certified)\s(?:human\s)?reviewers?\b"),
            _regex(
                r"\b(?:official|binding|authoritative|certified)\s(?:decision|ruling|determination|directive|instruction|record|"
                r"precedent|guidance|policy)\b"
            ),
            _regex(
                r"\b(?:this|the)\s(?:record|entry|decision|note|precedent)\s(?:is|was|has been)\s(?:verified|authenticated|signed|"
                r"certified)\b"
            ),
            _regex(
                r"\b(?:source|origin)\s?[:=]\s?(?:reviewer|human|verified|trusted|system)\b|\b(?:authenticated|trusted|verified)\s?[:=]\s?(?:true|yes|1)\b"
            ),
        ),
    ),
    Rule(
        "conditional_trigger",
        "sets a trigger for what the agent should do when it reads this",
        (
            _regex(rf"\bif\syou(?:\sare|'re)\s(?:an?\s)?(?:{_AGENT}|model|reading this|processing this|asked)\b"),
            _regex(r"\bif\s(?:you\s(?:are|get|were)\s)?asked\s(?:about|for|to|whether|if|what|how)\b"),
            _regex(
                rf"\bif\s(?:you|the\s{_AGENT})\s(?:see|sees|read|reads|recall|recalls|retrieve|retrieves|find|finds|encounter|"
                r"encounters|come\sacross|comes\sacross|process|processes|review|reviews|evaluate|evaluates|handle|handles)\s"
                r"(?:(?:a|an|any|the|this|another|one|such)\s)?(?:\w+\s){0,3}?(?:vendor|v\d+|exception|variance|case|record|entry|"
                r"memory|precedent|note|document|query|ticket|customer|claim|instruction)s?\b"
            ),
            _regex(
                rf"\b(?:when|whenever|once|after)\s(?:the\s|an?\s|any\s)?{_AGENT}s?\s(?:sees?|reads?|recalls?|retrieves?|finds?|"
                r"encounters?|process(?:es)?|(?:is|are|gets?)\sasked)\b"
            ),
            _regex(
                r"\bwhenever\syou\s(?:see|read|recall|retrieve|find|encounter|come\sacross|process|handle|review|evaluate|"
                r"(?:are|get)\sasked)\b"
            ),
            _regex(r"\bwhen\syou\s(?:are|get)\sasked\s(?:about|for|to|whether)\b"),
            _regex(
                rf"\bupon\s(?:reading|recalling|retrieving|seeing|encountering)\s(?:this|these)\b|\b(?:when|once|after)\s(?:this|these)\s"
                rf"{_IN_RECORD}s?\s(?:is|are)\s(?:recalled|retrieved|read|seen|found)\b"
            ),
        ),
    ),
    Rule(
        "encoded_blob",
        "carries encoded text a person cannot read",
        (
            # Base64: 40+ characters mixing upper case, lower case and digits (or + and /); never a plain word.
            _regex(
                r"(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{40,}={0,2}",
                form="plain",
            ),
            _regex(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{32,}\b"),  # hex: letters and digits, 32+
            _regex(r"\bdata:[a-z]+/[a-z0-9.+-]+(?:;[a-z0-9=.-]+)*[,;]"),
            _regex(
                r"(?:\\u[0-9a-f]{4}|\\u\{[0-9a-f]+\}){3,}|(?:\\x[0-9a-f]{2}){4,}|(?:%[0-9a-f]{2}){4,}|(?:&#x?[0-9a-f]+;){3,}"
            ),
            _base64_pieces,
            _rot13,
        ),
    ),
    Rule(
        "hidden_markup",
        "hides text in markup or invisible characters",
        (
            _hidden_characters,
            _regex(
                r"<!--.*?(?:-->|\Z)|<!\[cdata\[|<\?xml", flags=re.DOTALL
            ),  # a comment: the phrase shows what it hides
            _regex(rf"</?{_HTML_TAGS}(?:\s[^<>\n]{{0,300}})?/?>"),
            _regex(r"<[a-z][\w-]*\s+[\w-]+\s?=\s?[\"'][^\"'<>]*[\"'][^<>]{0,300}>"),  # any tag with an attribute
            _regex(r"!\[[^\]\n]{0,200}\]\([^)\n]{1,500}\)"),  # markdown image
            _regex(
                r"\[[^\]\n]{1,200}\]\((?:https?:|mailto:|javascript:|data:|#|/|www\.)[^)\n]{0,500}\)"
            ),  # markdown link
            _regex(r"(?m)^\s*\[[^\]\n]+\]:\s*\S+"),  # markdown reference definition, e.g. "[//]: # (hidden)"
        ),
    ),
    Rule(
        "identity_claim",
        "claims to be, or to speak for, a customer",
        (
            _second_marker,
            _regex(
                rf"\bthis\s{_IN_RECORD}\s(?:belongs\sto|(?:pertains|relates|refers|applies)\sto\s(?:the\s)?(?:customer|client|"
                r"account\s(?:holder|owner)))\b"
            ),
            _regex(
                r"\b(?:treat|consider|file|count|record)\s(?:this|it|these|the following)(?:\s(?:record|entry|note|interaction|memory|"
                r"history|ticket|text|document)s?)?\s(?:as|under)\s[^.\n]{0,60}?(?:'s?\s(?:history|records?|account|interactions?|"
                r"tickets?|profile|file|data|contacts?)\b|\bbelong(?:s|ing)\sto\b|\bcustomer\b)"
            ),
            _regex(
                r"\bi(?:\sam|'m|\sm)\s(?:the\s|an?\s)?(?:account\s(?:owner|holder|admin(?:istrator)?)|owner\sof\s(?:this|the)\saccount|"
                r"primary\scontact|billing\sowner|customer\s[a-z])"
            ),
            _regex(r"\bon\sbehalf\sof\s(?:the\s)?(?:customer|client|account\s(?:owner|holder))\b"),
            _regex(r"\b(?:is|are)\sthe\ssame\s(?:customer|person|account|user|client)\sas\b"),
        ),
    ),
)
RULE_LABELS: dict[str, str] = {rule.id: rule.label for rule in RULES}


_OWN_KEYS = ("rr_",)  # what this dashboard writes into metadata (signatures, digests): not a writer's words
_SEPARATORS = re.compile(r"[-_:/.=+]+")


def screen_record(
    text: str,
    *,
    context: str | None = None,
    metadata: Mapping[str, str] | None = None,
    tags: Sequence[str] = (),
    document_id: str | None = None,
) -> list[Flag]:
    """The flags of a record, wherever its words are: its text, its context, each metadata value, each tag and its
    document id (a tag's or an id's separators read as spaces), each flag saying where it was found."""
    flags = screen(text)
    fields = [("context", context or "")]
    fields += [(f'metadata "{key}"', value) for key, value in (metadata or {}).items() if not key.startswith(_OWN_KEYS)]
    fields += [("tag", _SEPARATORS.sub(" ", tag)) for tag in tags]
    fields += [("document id", _SEPARATORS.sub(" ", document_id or ""))]
    for where, value in fields:
        if value and isinstance(value, str):
            flags += [flag.model_copy(update={"where": where}) for flag in screen(value)]
    return flags


def screen(text: str, rules: Sequence[Rule] = RULES) -> list[Flag]:
    """The rules `text` breaks, in the order of RULES, each once with the phrase of its first match."""
    return list(_screened(text) if rules is RULES else _screen(text, rules))


@lru_cache(maxsize=2048)  # the same precedents reach many cases: each text is read once
def _screened(text: str) -> tuple[Flag, ...]:
    return _screen(text, RULES)


def _screen(text: str, rules: Sequence[Rule]) -> tuple[Flag, ...]:
    views = Views(text)
    return tuple(
        Flag(rule=rule.id, label=rule.label, phrase=_phrase(text, *span))
        for rule in rules
        if (span := rule.first(views))
    )
