"""A deterministic OpenAI-compatible stand-in for the LLM behind a REAL hindsight-api (1.1.0).

Only the LLM is doubled: hindsight-api runs for real and calls this server as its `openai` provider.
It answers every chat completion the server sends during start-up, retain and consolidation:

- `verification`  "Say 'ok'" (sent once per distinct LLM config at start-up) -> "ok"
- `extraction`    "Extract facts from the following chunk." -> {"facts": [...]}: each chunk REWRITTEN into
                  2-4 facts (support interactions, finance decisions, anything else sentence by sentence);
                  the chunk's first sentence is never kept verbatim.
- `consolidation` "You are a memory consolidation system" -> {"creates", "updates", "deletes"}: new facts
                  grouped by topic keyword (billing, login, export, ...); every existing observation of
                  the same topic (listed in the prompt with its id) is UPDATED with the new fact ids,
                  whoever it belongs to; a topic with none gets one CREATED observation.
- `dedup`         "You reconcile long-term memory observations" -> {"action": "merge"|"keep", ...}
- `bank_mission`  mission merge prompt -> plain text
- `unknown`       anything else -> a minimal answer valid for the schema the request carries (json_schema
                  response_format, the schema hindsight puts in the system prompt for json_object, or a tool
                  call when tools are forced); logged and kept in `requests`.
- `models`        GET /v1/models (and /v1/models/<id>).

Structured replies honour the request: `response_format` json_schema (strict) or json_object (the schema is
read from the system prompt), and a forced tool call when `tools` + a required/named `tool_choice` are sent.
Replies are conformed to that schema (unknown keys dropped, missing required keys filled), so the other
extraction variants (no causal links, verbatim, optional dimensions) get valid answers too.

Deterministic: the same request gives the same reply (no randomness, no clock; ids hash the request).

    with LLMDouble() as llm:
        env = llm.server_env()          # HINDSIGHT_API_LLM_* for hindsight-api
        ...                             # start hindsight-api with env, retain, recall
        assert "extraction" in llm.kinds()
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
DEFAULT_MODEL = "llm-double"

EXTRACTION_MARKER = "Extract facts from the following chunk."
CONSOLIDATION_MARKER = "You are a memory consolidation system"
DEDUP_MARKER = "You reconcile long-term memory observations"
MISSION_MARKER = "maintain an agent's mission statement"
SCHEMA_MARKER = "You must respond with valid JSON matching this schema:"

# Topic keywords, most specific first; a text's topic is the first topic with a keyword in it.
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("price variance", ("price variance", "per unit", "po price", "price tolerance", "price amendment")),
    ("quantity mismatch", ("quantity mismatch", "goods receipt shows", "received quantity", "shortfall")),
    ("missing receipt", ("missing receipt", "no goods receipt", "proof of delivery", "receipt posted")),
    ("tax mismatch", ("tax mismatch", "tax charged", "vat rate")),
    ("duplicate invoice", ("duplicate invoice", "duplicate submission", "already paid")),
    ("login", ("login", "log in", "sign-in", "sso", "saml", "okta", "password", "two-factor", "2fa", "authenticator")),
    ("export", ("export", "csv")),
    (
        "billing",
        (
            "billing",
            "billed",
            "invoice",
            "invoices",
            "charge",
            "charged",
            "refund",
            "refunded",
            "renewal",
            "payment",
            "vat",
            "credit",
            "seats",
        ),
    ),
    ("api", ("api", "rate limit", "429", "webhook", "tls", "sync")),
    ("account", ("admin", "role", "owner", "account", "address", "alias")),
    ("data protection", ("dpa", "data processing")),
)
GENERAL_TOPIC = "general"

_SUPPORT_RE = re.compile(
    r"^\s*(?P<prefix>[^\n]*?)\bcustomer\s+(?P<name>.+?)\s+contacted\s+support\.\s*"
    r"(?:current\s+issue:\s*(?P<issue>.*?))?\s*(?:support\s+response:\s*(?P<response>.*))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_FINANCE_RE = re.compile(
    r"^\s*Vendor\s+(?P<code>\S+)\s+\((?P<vendor>[^)]*)\)\s+(?P<kind>.+?)\s+on\s+invoice\s+(?P<invoice>[^\s,]+?)"
    r"(?:,\s*exception\s+(?P<exception>[^\s.]+))?\.\s*(?P<summary>.*?)\s*Decision:\s*(?P<outcome>[\w-]+)(?P<rest>.*)$",
    re.DOTALL,
)
_NAME_RE = re.compile(r"\b[A-Z][a-z]+(?:[ '][A-Z][a-z']+)+\b")
_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FACT_LINE_RE = re.compile(r"^\[(?P<id>[^\]\s]+)\]\s?(?P<text>.*)$")
_TEMPORAL_SUFFIX_RE = re.compile(r"\s*\((?:occurred_start|occurred_end|mentioned_at)=[^()]*\)\s*$")
_NOT_NAMES = {"Current Issue", "Support Response", "Escalation Note"}


@dataclass
class RecordedRequest:
    """One request the double answered: its kind, the raw JSON body and the reply's payload."""

    kind: str
    method: str
    path: str
    body: dict[str, Any] | None
    reply: Any = None
    detail: dict[str, Any] = field(default_factory=dict)


# -- text helpers ----------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def _sentence(text: str) -> str:
    text = _one_line(text).strip()
    return text if not text or text[-1] in ".!?" else text + "."


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _strip_period(text: str) -> str:
    return text.rstrip().rstrip(".")


def _content_text(content: Any) -> str:
    """A message's text whether it is a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def topic_of(text: str) -> str:
    low = text.lower()
    for topic, words in TOPICS:
        if any(re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", low) for w in words):
            return topic
    return GENERAL_TOPIC


def names_in(text: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """Person/company-like names (two or more capitalised words) in order of appearance."""
    found: list[str] = []
    for match in _NAME_RE.finditer(text):
        name = match.group(0)
        if name.title() in _NOT_NAMES or name in exclude or name in found:
            continue
        found.append(name)
    return found


# -- JSON schema helpers ---------------------------------------------------------------------------


def _resolve(schema: Any, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = node
    return schema if isinstance(schema, dict) else {}


def _types(schema: dict) -> list[str]:
    t = schema.get("type")
    return t if isinstance(t, list) else ([t] if t else [])


def minimal(schema: Any, root: dict | None = None) -> Any:
    """The smallest value valid for `schema` (required keys only, empty arrays, first enum value)."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [_resolve(b, root) for b in schema[key]]
            if any("null" in _types(b) for b in branches):
                return None
            return minimal(branches[0], root)
    types = _types(schema)
    if "object" in types or "properties" in schema:
        props = schema.get("properties", {})
        return {k: minimal(props.get(k, {}), root) for k in schema.get("required", [])}
    if "array" in types:
        count = int(schema.get("minItems", 0) or 0)
        return [minimal(schema.get("items", {}), root) for _ in range(count)]
    if "string" in types:
        return ""
    if "integer" in types:
        return 0
    if "number" in types:
        return 0
    if "boolean" in types:
        return False
    return None


def _fits(value: Any, schema: dict) -> bool:
    types = _types(schema)
    if not types:
        return True
    checks = {
        "null": value is None,
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }
    return any(checks.get(t, False) for t in types)


def conform(value: Any, schema: Any, root: dict | None = None) -> Any:
    """`value` reshaped to `schema`: keys the schema does not declare are dropped, required keys filled,
    enums and constants respected, nullable values kept. Without a schema the value is returned as is."""
    if not schema:
        return value
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [_resolve(b, root) for b in schema[key]]
            for branch in branches:
                if _fits(value, branch) and (value is not None or "null" in _types(branch)):
                    return conform(value, branch, root)
            return minimal(schema, root)
    if "enum" in schema and schema["enum"]:
        return value if value in schema["enum"] else schema["enum"][0]
    types = _types(schema)
    if ("object" in types or "properties" in schema) and isinstance(value, dict):
        props = schema.get("properties")
        if props is None:
            return value
        out = {k: conform(v, props[k], root) for k, v in value.items() if k in props}
        for k in schema.get("required", []):
            if k not in out:
                out[k] = minimal(props.get(k, {}), root)
        return out
    if "array" in types and isinstance(value, list):
        items = schema.get("items", {})
        out_list = [conform(v, items, root) for v in value]
        if isinstance(schema.get("maxItems"), int):
            out_list = out_list[: schema["maxItems"]]
        return out_list
    if _fits(value, schema):
        return value
    if "string" in types and value is not None:
        return str(value)
    return minimal(schema, root)


def _schema_in_text(text: str) -> dict | None:
    at = text.find(SCHEMA_MARKER)
    if at < 0:
        return None
    start = text.find("{", at)
    if start < 0:
        return None
    try:
        schema, _end = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


# -- the answers -----------------------------------------------------------------------------------


def _fact(
    what: str, who: str, entities: list[str], *, when: str = "N/A", why: str = "N/A", causes: list[int] | None = None
) -> dict[str, Any]:
    fact: dict[str, Any] = {
        "what": what,
        "when": when,
        "where": "N/A",
        "who": who or "N/A",
        "why": why or "N/A",
        "fact_kind": "conversation",
        "occurred_start": None,
        "occurred_end": None,
        "fact_type": "world",
        "entities": list(dict.fromkeys(e for e in entities if e)),
        "causal_relations": [{"target_index": i, "relation_type": "caused_by"} for i in causes] if causes else None,
        "from_attachments": None,
    }
    return fact


def _parse_extraction(user: str) -> dict[str, Any]:
    """Chunk, context, event date and metadata from the extraction user message."""
    body = user[user.find(EXTRACTION_MARKER) :]
    head, _sep, chunk = body.partition("\nContent:\n")
    metadata: dict[str, str] = {}
    in_meta = False
    event_date = context = ""
    for line in head.splitlines():
        if line.startswith("Event Date:"):
            event_date = line.partition(":")[2].strip()
        elif line.startswith("Context:"):
            context = line.partition(":")[2].strip()
        elif line.startswith("Metadata:"):
            in_meta = True
        elif in_meta and line.startswith("  ") and ":" in line:
            key, _, val = line.strip().partition(":")
            metadata[key.strip()] = val.strip()
        else:
            in_meta = False
    return {"chunk": chunk, "event_date": event_date, "context": context, "metadata": metadata}


def _when(chunk: str, metadata: dict[str, str]) -> str:
    """A date from the record itself (never the server's clock): metadata decided_on, or a date in the text."""
    for key in ("decided_on", "date", "occurred_on"):
        if _DATE_RE.fullmatch(metadata.get(key, "") or ""):
            return metadata[key]
    found = _DATE_RE.search(chunk)
    return found.group(0) if found else "N/A"


def _possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")


def support_facts(match: re.Match, when: str) -> list[dict[str, Any]]:
    name = _one_line(match.group("name"))
    issue = _one_line(match.group("issue") or "")
    response = _one_line(match.group("response") or "")
    prefix = _one_line(match.group("prefix") or "").rstrip(":").strip()
    others = names_in(f"{issue} {response}", exclude=(name,))
    entities = [name, *others]
    who = f"{name} (customer)" + "".join(f", {o} (mentioned)" for o in others)
    facts = []
    if issue:
        facts.append(_fact(f"{name} asked support for help: {_sentence(issue)}", who, entities, when=when))
    if response:
        causes = [0] if issue else None
        facts.append(
            _fact(
                f"Support resolved {_possessive(name)} request: {_sentence(response)}",
                f"{name} (customer), the support team",
                entities,
                when=when,
                causes=causes,
            )
        )
    if prefix:
        facts.append(
            _fact(
                f"The support record about {name} is filed as: {_sentence(_lower_first(prefix))}",
                f"{name} (customer)",
                [name],
                when=when,
            )
        )
    if len(facts) < 2:
        facts.append(_fact(f"{name} is a customer with a support history.", f"{name} (customer)", [name], when=when))
    return facts


def _labelled(rest: str) -> dict[str, str]:
    """'..., by reviewer x approving .... Rationale: a. Reason: b. Note: c' -> {"by": ..., "rationale": ...}."""
    parts = re.split(r"\s*\b(Rationale|Reason|Note):\s*", rest)
    out = {"by": _strip_period(parts[0].lstrip(" ,.").strip())}
    for label, text in zip(parts[1::2], parts[2::2], strict=False):
        out[label.lower()] = _strip_period(_one_line(text))
    return out


def finance_facts(match: re.Match, when: str) -> list[dict[str, Any]]:
    code, vendor = match.group("code"), _one_line(match.group("vendor"))
    kind, invoice = _one_line(match.group("kind")), match.group("invoice")
    exception, summary = match.group("exception"), _one_line(match.group("summary"))
    outcome = match.group("outcome").lower()
    labels = _labelled(match.group("rest"))
    entities = [vendor, code]
    who = f"{vendor} (vendor {code}), the AP team"
    ref = f"invoice {invoice}" + (f" (exception {exception})" if exception else "")
    facts = [
        _fact(
            f"{vendor} (vendor {code}) had a {kind} on {ref}: {_sentence(summary) if summary else 'no details given.'}",
            who,
            entities,
            when=when,
        ),
    ]
    reviewer = f" {labels['by']}" if labels.get("by") else ""
    why = labels.get("rationale") or labels.get("reason") or "N/A"
    facts.append(
        _fact(
            f"The AP team's decision on the {kind} of {ref} from {vendor} was to {outcome}{reviewer}.",
            who,
            entities,
            when=when,
            why=why,
            causes=[0],
        )
    )
    if labels.get("reason") and labels.get("rationale"):
        facts.append(
            _fact(
                f"The reason recorded for the {outcome} of {ref}: {_sentence(labels['reason'])}",
                who,
                entities,
                when=when,
            )
        )
    if labels.get("note"):
        facts.append(
            _fact(
                f"The reviewer noted about {ref} from {vendor}: {_sentence(labels['note'])}", who, entities, when=when
            )
        )
    return facts[:4]


def generic_facts(chunk: str, when: str) -> list[dict[str, Any]]:
    text = _one_line(chunk)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n{2,}", text) if s.strip()]
    if len(sentences) == 1:  # one sentence: split it at a colon or semicolon, else state its names apart
        clauses = [c for c in re.split(r":\s+|;\s+", sentences[0]) if c.strip()]
        sentences = clauses if len(clauses) > 1 else sentences
    if len(sentences) > 4:  # at most four facts: consecutive sentences grouped
        size = -(-len(sentences) // 4)
        sentences = [" ".join(sentences[i : i + size]) for i in range(0, len(sentences), size)]
    entities = names_in(text)
    who = ", ".join(entities) or "N/A"
    facts = [
        _fact(f"The record states that {_lower_first(_strip_period(s.strip()))}.", who, entities, when=when)
        for s in sentences
    ]
    if len(facts) < 2:
        topic = topic_of(text)
        about = ", ".join(entities) if entities else f"the {topic} topic"
        facts.append(_fact(f"The record is about {about}.", who, entities, when=when))
    return facts


def extract(user: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The {"facts": [...]} answer for one extraction request, and what was recognised."""
    parsed = _parse_extraction(user)
    chunk, metadata = parsed["chunk"], parsed["metadata"]
    when = _when(chunk, metadata)
    if m := _SUPPORT_RE.match(chunk):
        shape, facts = "support", support_facts(m, when)
    elif m := _FINANCE_RE.match(chunk):
        shape, facts = "finance", finance_facts(m, when)
    else:
        shape, facts = "generic", generic_facts(chunk, when)
    return {"facts": facts}, {"shape": shape, "chunk": chunk, "metadata": metadata}


def _fact_text(line_text: str) -> str:
    """The `what` part of a stored fact line: temporal suffix and ' | When: / Involving:' parts removed."""
    text = _TEMPORAL_SUFFIX_RE.sub("", line_text)
    return _sentence(text.split(" | ")[0])


def _observation_topic(text: str) -> str:
    head = text.split(":", 1)[0].strip().lower()
    names = {t for t, _ in TOPICS} | {GENERAL_TOPIC}
    return head if head in names else topic_of(text)


def _parse_consolidation(user: str) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    facts_part, _sep, obs_part = user.partition("### Existing observations")
    facts_part = facts_part.split("### New facts", 1)[-1]
    facts = []
    for line in facts_part.splitlines():
        if m := _FACT_LINE_RE.match(line.strip()):
            facts.append((m.group("id"), m.group("text")))
    observations: list[dict[str, Any]] = []
    start = obs_part.find("[")
    if start >= 0:
        try:
            parsed, _end = json.JSONDecoder().raw_decode(obs_part[start:])
            observations = [o for o in parsed if isinstance(o, dict) and o.get("id")]
        except ValueError:
            observations = []
    return facts, observations


def consolidate(user: str, allowed_ids: list[str] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    facts, observations = _parse_consolidation(user)
    if allowed_ids:
        allowed = set(allowed_ids)
        facts = [(i, t) for i, t in facts if i in allowed]
    by_topic: dict[str, list[tuple[str, str]]] = {}
    for fact_id, text in facts:
        what = _fact_text(text)
        by_topic.setdefault(topic_of(what), []).append((fact_id, what))
    # EVERY shown observation of the topic is updated (whoever's it is): the result does not depend on
    # the order the server lists them in, which varies between server processes.
    obs_by_topic: dict[str, list[dict[str, Any]]] = {}
    for obs in observations:
        obs_by_topic.setdefault(_observation_topic(str(obs.get("text", ""))), []).append(obs)
    creates, updates = [], []
    for topic, members in by_topic.items():
        ids = [i for i, _ in members]
        targets = sorted(obs_by_topic.get(topic, []), key=lambda o: str(o["id"]))
        for target in targets:
            current = str(target.get("text", ""))
            added = [w for _, w in members if w not in current]
            text = " ".join([current, *added]).strip()
            updates.append(
                {
                    "observation_id": str(target["id"]),
                    "current_text": current,
                    "text": text,
                    "source_fact_ids": ids,
                    "reason": f"Same topic ({topic}) as the existing observation: UPDATE.",
                }
            )
        if not targets:
            text = f"{topic.capitalize()}: " + " ".join(w for _, w in members)
            creates.append(
                {"text": text, "source_fact_ids": ids, "reason": f"No existing observation on {topic}: CREATE."}
            )
    detail = {
        "topics": {t: [i for i, _ in m] for t, m in by_topic.items()},
        "updated": [u["observation_id"] for u in updates],
        "observations_shown": len(observations),
    }
    return {"creates": creates, "updates": updates, "deletes": []}, detail


def dedup(text: str) -> dict[str, Any]:
    new = re.search(r"^\[NEW\] (.*)$", text, re.MULTILINE)
    old = re.search(r"^\[EXISTING\] (.*)$", text, re.MULTILINE)
    a, b = (_one_line(m.group(1)).lower() if m else "" for m in (new, old))
    if a and a == b:
        return {"action": "merge", "text": _one_line(old.group(1)), "reason": "Identical observations."}
    return {"action": "keep", "text": "", "reason": "The observations differ."}


# -- the HTTP server -------------------------------------------------------------------------------


class LLMDouble:
    """The stand-in LLM server: `start()` / `stop()` or a context manager; `requests` lists what it answered."""

    def __init__(self, model: str = DEFAULT_MODEL, host: str = HOST, port: int = 0):
        self.model = model
        self._host, self._port = host, port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []

    # lifecycle
    def start(self) -> LLMDouble:
        if self._server is not None:
            return self
        double = self

        class Handler(_Handler):
            owner = double

        self._server = ThreadingHTTPServer((self._host, self._port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="llm-double", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> LLMDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # where it is
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("LLMDouble is not running")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    def server_env(self, observations: bool = True) -> dict[str, str]:
        """The variables that point hindsight-api at this double (replace HINDSIGHT_API_LLM_PROVIDER=none)."""
        return {
            "HINDSIGHT_API_LLM_PROVIDER": "openai",
            "HINDSIGHT_API_LLM_BASE_URL": self.base_url,
            "HINDSIGHT_API_LLM_API_KEY": "x",
            "HINDSIGHT_API_LLM_MODEL": self.model,
            "HINDSIGHT_API_ENABLE_OBSERVATIONS": "true" if observations else "false",
        }

    # what it saw
    def kinds(self) -> list[str]:
        with self._lock:
            return [r.kind for r in self.requests]

    def of_kind(self, kind: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    def count(self, kind: str) -> int:
        return len(self.of_kind(kind))

    @property
    def unknown(self) -> list[RecordedRequest]:
        return self.of_kind("unknown")

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(record)

    # answering
    def answer_chat(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(kind, the chat.completion response) for one POST /v1/chat/completions body."""
        messages = body.get("messages") or []
        texts = [(m.get("role"), _content_text(m.get("content"))) for m in messages if isinstance(m, dict)]
        system = "\n".join(t for r, t in texts if r in ("system", "developer"))
        users = [t for r, t in texts if r == "user"]
        everything = "\n".join(t for _r, t in texts)
        schema = self._requested_schema(body, everything)
        tool = self._forced_tool(body)
        if tool is not None and schema is None:
            schema = (tool.get("function") or {}).get("parameters")

        detail: dict[str, Any] = {}
        extraction_user = next((u for u in users if EXTRACTION_MARKER in u), None)
        if extraction_user is not None:
            kind = "extraction"
            payload, detail = extract(extraction_user)
        elif CONSOLIDATION_MARKER in system or CONSOLIDATION_MARKER in everything:
            kind = "consolidation"
            user = next((u for u in users if "### New facts" in u), users[-1] if users else "")
            payload, detail = consolidate(user, _enum_fact_ids(schema))
        elif DEDUP_MARKER in everything:
            kind = "dedup"
            payload = dedup(everything)
        elif MISSION_MARKER in everything:
            kind = "bank_mission"
            new = re.search(r"New information to add:\s*(.*?)\n\s*\nInstructions:", everything, re.DOTALL)
            payload = _one_line(new.group(1)) if new else "I remember what matters."
        elif users and users[-1].strip().endswith("Say 'ok'"):
            kind = "verification"
            payload = "ok"
        else:
            kind = "unknown"
            payload = minimal(schema) if schema is not None else "ok"
            logger.warning("LLMDouble: unknown request (%s): %.200r", "json" if schema else "text", everything)
            detail = {"preview": everything[:500]}

        if schema is not None and not isinstance(payload, str):
            payload = conform(payload, schema)
        response = self._completion(body, payload, tool if tool is not None else None, as_json=schema is not None)
        self._record(RecordedRequest(kind, "POST", "/v1/chat/completions", body, payload, detail))
        return kind, response

    @staticmethod
    def _requested_schema(body: dict[str, Any], text: str) -> dict | None:
        fmt = body.get("response_format")
        if isinstance(fmt, dict):
            if fmt.get("type") == "json_schema":
                return (fmt.get("json_schema") or {}).get("schema") or {}
            if fmt.get("type") == "json_object":
                return _schema_in_text(text) or {}
        return _schema_in_text(text)  # soft path without json_object (backends without JSON mode)

    @staticmethod
    def _forced_tool(body: dict[str, Any]) -> dict | None:
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        choice = body.get("tool_choice")
        if not tools or choice in (None, "auto", "none"):
            return None
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            return next((t for t in tools if (t.get("function") or {}).get("name") == name), tools[0])
        return tools[0]  # "required"

    def _completion(self, body: dict[str, Any], payload: Any, tool: dict | None, as_json: bool) -> dict[str, Any]:
        content = payload if isinstance(payload, str) and not as_json else json.dumps(payload, ensure_ascii=False)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:24]
        if tool is not None:
            name = (tool.get("function") or {}).get("name", "tool")
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{digest[:12]}", "type": "function", "function": {"name": name, "arguments": content}}
                ],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": content}, "stop"
        prompt_chars = sum(
            len(_content_text(m.get("content"))) for m in body.get("messages") or [] if isinstance(m, dict)
        )
        prompt_tokens, completion_tokens = max(1, prompt_chars // 4), max(1, len(content) // 4)
        return {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "llm-double"}],
        }


def _enum_fact_ids(schema: dict | None) -> list[str] | None:
    """The batch's fact ids, when the consolidation schema pins source_fact_ids to an enum."""
    if not schema:
        return None
    defs = schema.get("$defs", {})
    for node in defs.values():
        items = ((node.get("properties") or {}).get("source_fact_ids") or {}).get("items") or {}
        if items.get("enum"):
            return [str(x) for x in items["enum"]]
    return None


class _Handler(BaseHTTPRequestHandler):
    owner: LLMDouble
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: requests are recorded instead
        logger.debug("LLMDouble %s", format % args)

    def _send(self, status: int, payload: Any, stream: bool = False) -> None:
        if stream:
            data = _sse(payload)
            content_type = "text/event-stream"
        else:
            data = json.dumps(payload, ensure_ascii=False).encode()
            content_type = "application/json"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self.owner._record(RecordedRequest("models", "GET", path, None))
            self._send(200, self.owner.models())
        elif path.startswith(("/v1/models/", "/models/")):
            self.owner._record(RecordedRequest("models", "GET", path, None))
            self._send(200, self.owner.models()["data"][0] | {"id": path.rsplit("/", 1)[-1]})
        else:
            self.owner._record(RecordedRequest("unknown", "GET", path, None))
            self._send(404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        if path.endswith("/chat/completions") and isinstance(body, dict):
            try:
                _kind, response = self.owner.answer_chat(body)
            except Exception as exc:  # a bug in the double must show, not hang the server's retries
                logger.exception("LLMDouble failed to answer")
                self.owner._record(RecordedRequest("error", "POST", path, body, detail={"error": repr(exc)}))
                self._send(500, {"error": {"message": f"llm double failed: {exc!r}", "type": "server_error"}})
                return
            self._send(200, response, stream=bool(body.get("stream")))
        else:
            self.owner._record(RecordedRequest("unknown", "POST", path, body if isinstance(body, dict) else None))
            self._send(404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})


def _sse(response: dict[str, Any]) -> bytes:
    """A non-streamed completion replayed as one streamed chunk plus the finish chunk."""
    choice = response["choices"][0]
    base = {k: response[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
    chunks = [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base
        | {
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            "usage": response["usage"],
        },
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
