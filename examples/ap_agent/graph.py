"""An accounts-payable agent as a LangGraph graph, using Hindsight's official integration (hindsight-langgraph 0.3.1,
unmodified) for its memory and Recall Review's API for the human's decision. No LLM: each step is deterministic.

    recall -> propose -> submit -> human_review (interrupt) -> act

1. recall: the precedents for the case's vendor AND exception type, through the integration's recall node.
2. propose: the outcome most of those precedents took (none, or a tie: escalate), a confidence and a rationale.
3. submit: the case and the agent's part handed to human review (POST /api/v1/cases/finance).
4. human_review: `interrupt(...)` until the runner resumes the graph with the person's final decision.
5. act: the decision recorded in the state, as what the agent does next.

Everything costly (the recalls, the submission) happens before the interrupt, in nodes of their own: LangGraph runs
the interrupted node again from its start on resume, and only that node.

The whole agent runs in ONE event loop: the Hindsight client's aiohttp session belongs to the loop that first used it.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hindsight_client import Hindsight
from hindsight_langgraph import create_recall_node
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from dashboard.api.client import AgentPart, AgentRecall, CaseOut, ReviewApiError, ReviewClient

AGENT_NAME = "ap-agent (examples/ap_agent)"
AGENT_VERSION = "1"
KIND = "finance"  # the queue kind's key in the API's paths
OUTCOMES = ("approve", "reject", "escalate")  # the finance kind's outcomes
TAGS_MATCH = "all_strict"  # every tag (vendor AND type); untagged memories never
MAX_PRECEDENTS = 25
# A precedent's text as the dashboard writes it, seeded or decided by a reviewer: "... Decision: reject. Rationale: ..."
# or "... Decision: approve, by reviewer Dana ...".
DECISION_IN_TEXT = re.compile(r"\bDecision: (approve|reject|escalate)\b")
ITEM = re.compile(r"^(\d+)\. (.*)$")
ACTIONS = {  # what this agent does once a person has decided
    "approve": "release {invoice} for payment",
    "reject": "return {invoice} to the vendor",
    "escalate": "route {invoice} to the AP manager",
}


class APState(MessagesState, total=False):
    """The graph's state. `messages` (from MessagesState) holds the recall query as a HumanMessage: the integration's
    recall node reads its query from the last one."""

    case: dict[str, Any]  # the exception as the finance queue has it (id, vendor_code, exception_type, invoice, ...)
    precedents: str | None  # the integration's recall, as it gives it: one text block, or None when nothing matched
    recalled: list[dict[str, str]]  # the same recall's results with their document ids (the direct recall below)
    proposal: dict[str, Any]  # recommendation, confidence, rationale, cited
    submitted: dict[str, Any]  # what the API answered: status, seq
    decision: dict[str, Any]  # the person's final decision, as the API reported it (the resume value)
    outcome: str
    action: str


def tags_for(case: Mapping[str, Any]) -> list[str]:
    return [f"vendor:{case['vendor_code']}", f"type:{case['exception_type']}"]


def query_for(case: Mapping[str, Any]) -> str:
    """The recall query, worded as the dashboard's own finance recall words it (no "Label:" prefix: Hindsight 1.1.0's
    date analyser trips over `Vendor V01: ...`)."""
    return f"{case['exception_type'].replace('_', ' ')} for vendor {case['vendor_code']} {case['vendor_name']} {case['description']}"


def memory_items(block: str | None) -> list[str]:
    """The numbered texts of the integration's recall block ("<header>\\n1. <text>\\n2. <text>"); a text that spans
    lines stays one item."""
    items: list[str] = []
    for line in (block or "").splitlines()[1:]:  # the first line is the integration's fixed header
        numbered = ITEM.match(line)
        if numbered and int(numbered.group(1)) == len(items) + 1:
            items.append(numbered.group(2))
        elif items:
            items[-1] += "\n" + line
    return items


def propose(case: Mapping[str, Any], precedents: list[str], ids_by_text: Mapping[str, str]) -> dict[str, Any]:
    """The outcome most precedents took, its share as the confidence, and the precedents that took it as citations.
    No precedent, or a tie at the top: escalate (a person decides what memory cannot)."""
    scope = f"vendor {case['vendor_code']} {case['exception_type'].replace('_', ' ')}"
    voted = [(text, m.group(1)) for text in precedents if (m := DECISION_IN_TEXT.search(text))]
    if not voted:
        return {
            "recommendation": "escalate",
            "confidence": 0.0,
            "cited": [],
            "rationale": f"No precedent with a decision for {scope}: escalating for a person to decide.",
        }
    votes = Counter(outcome for _text, outcome in voted).most_common()
    (top, count), runner_up = votes[0], votes[1][1] if len(votes) > 1 else 0
    tally = ", ".join(f"{n} {outcome}" for outcome, n in votes)
    if count == runner_up:
        return {
            "recommendation": "escalate",
            "confidence": round(count / len(voted), 2),
            "cited": [],
            "rationale": f"The {len(voted)} precedents for {scope} are split ({tally}): escalating.",
        }
    cited = list(dict.fromkeys(ids_by_text[text] for text, outcome in voted if outcome == top and text in ids_by_text))
    return {
        "recommendation": top,
        "confidence": round(count / len(voted), 2),
        "cited": cited,
        "rationale": f"{count} of {len(voted)} precedents for {scope} were decided {top} ({tally}).",
    }


@dataclass
class Agent:
    """The graph and what its nodes use: a Hindsight client on the finance bank, and the Review API's client."""

    hindsight: Hindsight
    review: ReviewClient
    bank: str
    budget: str = "mid"

    def __post_init__(self):
        builder = StateGraph(APState)
        builder.add_node("recall", self._recall)
        builder.add_node("propose", self._propose)
        builder.add_node("submit", self._submit)
        builder.add_node("human_review", self._human_review)
        builder.add_node("act", self._act)
        builder.add_edge(START, "recall")
        builder.add_edge("recall", "propose")
        builder.add_edge("propose", "submit")
        builder.add_edge("submit", "human_review")
        builder.add_edge("human_review", "act")
        builder.add_edge("act", END)
        self.graph = builder.compile(checkpointer=InMemorySaver())

    # -- the nodes ------------------------------------------------------------------------------------------------
    async def _recall(self, state: APState) -> dict:
        case = state["case"]
        tags = tags_for(case)
        # The integration fixes a recall node's tags when it is built: one node per case (no I/O; the client is reused).
        node = create_recall_node(
            client=self.hindsight,
            bank_id=self.bank,
            tags=tags,
            tags_match=TAGS_MATCH,
            budget=self.budget,
            max_results=MAX_PRECEDENTS,
            output_key="precedents",
        )
        precedents = (await node(state))["precedents"]
        # The integration gives the recalled texts only: it drops each memory's document id, which the agent must cite
        # and hand in with its recall. One direct recall with the same request (the same client, query, tags and
        # budget) gives the ids; each text of the integration's block is matched to its document by its text.
        direct = await self.hindsight.arecall(
            bank_id=self.bank,
            query=query_for(case),
            budget=self.budget,
            max_tokens=4096,
            tags=tags,
            tags_match=TAGS_MATCH,
        )
        recalled = [
            {"document_id": r.document_id or r.id, "text": r.text} for r in (direct.results or [])[:MAX_PRECEDENTS]
        ]
        return {"precedents": precedents, "recalled": recalled}

    def _propose(self, state: APState) -> dict:
        ids_by_text = {r["text"]: r["document_id"] for r in state.get("recalled", [])}
        return {"proposal": propose(state["case"], memory_items(state.get("precedents")), ids_by_text)}

    async def _submit(self, state: APState) -> dict:
        case, proposal = state["case"], state["proposal"]
        part = AgentPart(
            name=AGENT_NAME,
            version=AGENT_VERSION,
            recommendation=proposal["recommendation"],
            confidence=proposal["confidence"],
            rationale=proposal["rationale"],
            cited=proposal["cited"],
            recall=AgentRecall(
                query=query_for(case),
                tags=tags_for(case),
                tags_match=TAGS_MATCH,
                document_ids=[r["document_id"] for r in state.get("recalled", [])],
            ),
        )
        out = await asyncio.to_thread(self.review.submit_case, KIND, case, part)  # the client is synchronous
        return {"submitted": {"status": out.status, "seq": out.seq}}

    def _human_review(self, state: APState) -> dict:
        # Runs again from its start when the graph resumes: nothing before interrupt() may have an effect.
        decision = interrupt(
            {"case_id": state["case"]["id"], "waiting_for": "a person's final decision", "proposal": state["proposal"]}
        )
        return {"decision": decision}

    def _act(self, state: APState) -> dict:
        decision = state["decision"]
        action = ACTIONS.get(decision["outcome"], "follow the decision {outcome} on {invoice}")
        return {
            "outcome": decision["outcome"],
            "action": action.format(invoice=state["case"]["invoice"], outcome=decision["outcome"]),
        }

    # -- running it ----------------------------------------------------------------------------------------------
    @staticmethod
    def config(case_id: str) -> dict:
        return {"configurable": {"thread_id": f"ap-{case_id}"}}  # one thread (checkpoint history) per case

    async def start(self, case: Mapping[str, Any]) -> dict:
        """Run a case up to the human's decision: the state, paused at human_review (its `__interrupt__` says why)."""
        case = dict(case)
        return await self.graph.ainvoke(
            {"case": case, "messages": [HumanMessage(query_for(case))]}, self.config(case["id"])
        )

    async def paused_at(self, case_id: str) -> tuple[str, ...]:
        """The nodes the case's thread waits to run: ("human_review",) while it waits for a person; () once done."""
        return tuple((await self.graph.aget_state(self.config(case_id))).next)

    async def wait_and_resume(self, case_id: str, timeout_s: float = 3600) -> dict | None:
        """Wait (off the event loop) until a person's decision on the case is final AND retained in Hindsight, then
        resume the graph with it: the final state. None when `timeout_s` ran out first (the graph stays paused)."""
        decided: CaseOut = await asyncio.to_thread(
            self.review.wait_for_decision, KIND, case_id, timeout_s=timeout_s, in_memory=True
        )
        if not decided.in_memory:
            return None
        resume = {"case_id": case_id, "status": decided.status, **decided.decision.model_dump(mode="json")}
        return await self.graph.ainvoke(Command(resume=resume), self.config(case_id))

    async def already_decided(self, case_id: str) -> CaseOut | None:
        """The case as the API has it, when it was handed in and decided already (a second run of the same file)."""
        try:
            out = await asyncio.to_thread(self.review.case, KIND, case_id)
        except ReviewApiError as exc:
            if exc.status == 404:
                return None
            raise
        return out if out.final else None

    async def run(self, case: Mapping[str, Any], timeout_s: float = 3600) -> dict | None:
        """One case, end to end: recall, propose, submit, wait for the person, act. None when no decision came in time."""
        await self.start(case)
        return await self.wait_and_resume(case["id"], timeout_s)
