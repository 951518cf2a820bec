"""The example AP agent (examples/ap_agent: LangGraph and hindsight-langgraph, unmodified) against the real embedded
Hindsight and the app's API, with a reviewer deciding in Chromium: the agent recalls precedents through the
integration, proposes, hands the case in and pauses on LangGraph's interrupt; a person overrides it on the case page;
the paused graph resumes with exactly that decision; and the agent's next case for the same vendor and type recalls
the person's decision as a precedent. Real servers only; every wait polls with a deadline."""

from __future__ import annotations

import asyncio
import queue
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from hindsight_client import Hindsight
from playwright.sync_api import Page, expect

from dashboard.access.api_tokens import ApiTokens
from dashboard.api.client import ReviewClient
from dashboard.store.db import make_engine
from examples.ap_agent.__main__ import load_cases
from examples.ap_agent.graph import AGENT_NAME, Agent, memory_items
from tests.e2e.conftest import choose, click_button, decision_form, heading, settled

pytestmark = pytest.mark.browser
FIRST, SECOND = load_cases(Path(__file__).resolve().parents[2] / "examples" / "ap_agent" / "cases.json")
DEADLINE_S = 300  # the longest any step of the agent may take to report (a loaded machine); never a timed assert
V02_PRICE_PRECEDENTS = ["PREC-V02-PRI-01", "PREC-V02-PRI-02"]  # the demo finance bank's, both decided reject
REVIEWER, NOTE = "Dana Finance", "Acme's 2027 price list was agreed with purchasing on 28 Nov."


class AgentThread:
    """The agent as `python -m examples.ap_agent` runs it (one event loop for everything), in a thread of its own:
    this thread drives Chromium with Playwright's sync API, which keeps a loop of its own here. Each step the agent
    reaches is reported on a queue, read in order with a deadline."""

    def __init__(self, hindsight_url: str, app_url: str, token: str, bank: str):
        self.reports: queue.Queue = queue.Queue()
        self.args = hindsight_url, app_url, token, bank
        self.thread = threading.Thread(target=lambda: asyncio.run(self._session()), name="ap-agent", daemon=True)

    def _report(self, step: str, value: Any) -> None:
        self.reports.put((step, value))

    async def _session(self) -> None:
        hindsight_url, app_url, token, bank = self.args
        hindsight = Hindsight(base_url=hindsight_url, timeout=30.0)
        review = ReviewClient(app_url, token)
        agent = Agent(hindsight, review, bank)
        try:
            first = await agent.start(FIRST)
            self._report("first paused", (first, await agent.paused_at(FIRST["id"])))
            resumed = await agent.wait_and_resume(FIRST["id"], timeout_s=DEADLINE_S)
            self._report("first resumed", (resumed, await agent.paused_at(FIRST["id"])))
            second = await agent.start(SECOND)
            self._report("second paused", (second, await agent.paused_at(SECOND["id"])))
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread, which raises it
            self._report("failed", exc)
        finally:
            review.close()
            await hindsight.aclose()

    def next(self, step: str):
        try:
            got, value = self.reports.get(timeout=DEADLINE_S)
        except queue.Empty:
            raise AssertionError(f"the agent did not reach {step!r} within {DEADLINE_S} s") from None
        if got == "failed":
            raise value
        assert got == step, (got, step)
        return value


def type_name(page: Page, name: str) -> None:
    field = page.locator('input[aria-label="Reviewer name"]')
    field.fill(name)
    field.press("Tab")
    settled(page)


def test_the_example_agent_pauses_for_a_person_resumes_with_the_decision_and_recalls_it(
    app, hindsight, page: Page, shots, request
):
    engine = make_engine(None, app.data_dir)  # the app's review store
    try:
        token, _ = ApiTokens(engine).create("ap-agent", ["finance"], ["submit", "read"], "test")
    finally:
        engine.dispose()
    review = ReviewClient(app.url, token)  # the test's own reader of the API
    request.addfinalizer(review.close)
    agent = AgentThread(hindsight.settings.base_url, app.url, token, app.finance_bank)
    agent.thread.start()

    # 1. Recall through the integration, a proposal, the case handed in, and the graph paused at its interrupt.
    first, paused_at = agent.next("first paused")
    assert paused_at == ("human_review",)
    [waiting] = first["__interrupt__"]
    assert waiting.value["case_id"] == FIRST["id"]
    assert "Decision: reject" in first["precedents"] and first["precedents"].count("\n") == 2  # header + 2 texts
    assert sorted(r["document_id"] for r in first["recalled"]) == V02_PRICE_PRECEDENTS
    proposal = first["proposal"]
    assert (proposal["recommendation"], proposal["confidence"], sorted(proposal["cited"])) == (
        "reject",
        1.0,
        V02_PRICE_PRECEDENTS,
    )
    assert proposal["rationale"] == "2 of 2 precedents for vendor V02 price variance were decided reject (2 reject)."
    handed_in = review.case("finance", FIRST["id"])
    assert (handed_in.status, handed_in.final, handed_in.in_memory, handed_in.decision) == ("open", False, False, None)
    part = handed_in.agent
    assert (part.name, part.recommendation, part.confidence, part.rationale) == (
        AGENT_NAME,
        "reject",
        1.0,
        proposal["rationale"],
    )
    assert sorted(part.cited) == V02_PRICE_PRECEDENTS
    assert (part.recall.tags, part.recall.tags_match) == (["vendor:V02", "type:price_variance"], "all_strict")
    assert sorted(part.recall.document_ids) == V02_PRICE_PRECEDENTS
    assert handed_in.case["invoice"] == FIRST["invoice"] and handed_in.source == "api:ap-agent"

    # 2. A reviewer opens the handed-in case and overrides the agent: approve, the price was agreed.
    page.goto(f"{app.url}/exceptions?case={FIRST['id']}")
    expect(heading(page, f"{FIRST['id']}:")).to_be_visible()
    said = page.locator(".st-key-agent_part")  # the submitting agent's part, beside the dashboard's recompute
    expect(said.get_by_text(f"{AGENT_NAME}", exact=False).first).to_be_visible()
    expect(said.get_by_text(re.compile(r"recommends reject \(reject\), confidence 1\.00"))).to_be_visible()
    expect(
        said.get_by_text("The agent and the dashboard's recompute agree on its recommendation and citations.")
    ).to_be_visible()
    type_name(page, REVIEWER)
    form = decision_form(page)
    # Each field is sent as it changes; the draft notice above the form has its slot from the start, so the first
    # change moves nothing and the next click lands where it was aimed.
    form.get_by_text("Override", exact=True).click()
    choose(page, "Override outcome", "approve for payment")
    form.get_by_text("PRICE_AGREED: Price change agreed with the vendor", exact=True).click()
    page.locator('textarea[aria-label="Note"]').fill(NOTE)
    shots(page, "example-agent-override")
    click_button(page, "Record decision")
    expect(
        page.get_by_text(re.compile(rf"^{FIRST['id']} recorded: approve for payment \(decision #\d+\)"))
    ).to_be_visible()
    recorded = app.outbox().latest("exception", FIRST["id"]).decision
    assert (recorded.outcome, recorded.overridden, recorded.reason_code, recorded.note, recorded.reviewer) == (
        "approve",
        True,
        "PRICE_AGREED",
        NOTE,
        REVIEWER,
    )

    # 3. The paused graph resumes with exactly what the screen recorded, once it is in memory, and acts on it.
    resumed, paused_at = agent.next("first resumed")
    assert paused_at == () and "__interrupt__" not in resumed
    decision = resumed["decision"]
    assert (
        decision["case_id"],
        decision["outcome"],
        decision["reviewer"],
        decision["reason_code"],
        decision["note"],
        decision["overridden"],
    ) == (FIRST["id"], recorded.outcome, recorded.reviewer, recorded.reason_code, recorded.note, True)
    assert decision["status"] == "decided" and decision["document_id"] == f"decision-{FIRST['id']}"
    assert (resumed["outcome"], resumed["action"]) == ("approve", f"release {FIRST['invoice']} for payment")
    assert (
        resumed["proposal"] == proposal and resumed["recalled"] == first["recalled"]
    )  # nothing before the pause ran again

    # 4. The agent's next case for the same vendor and type: the integration's recall holds the person's decision.
    second, paused_at = agent.next("second paused")
    assert paused_at == ("human_review",)
    items = memory_items(second["precedents"])  # the integration's block: "<header>\n1. <text>\n2. <text>..."
    [human] = [text for text in items if f"exception {FIRST['id']}" in text]
    assert f"Decision: approve, by reviewer {REVIEWER} overriding" in human and NOTE in human
    by_id = {r["document_id"]: r["text"] for r in second["recalled"]}
    assert sorted(by_id) == sorted([*V02_PRICE_PRECEDENTS, decision["document_id"]])
    assert human == by_id[decision["document_id"]]  # the integration's text is that document's
    assert (
        second["proposal"]["rationale"]
        == "2 of 3 precedents for vendor V02 price variance were decided reject (2 reject, 1 approve)."
    )
    assert decision["document_id"] in review.case("finance", SECOND["id"]).agent.recall.document_ids
    agent.thread.join(timeout=DEADLINE_S)  # its clients closed in its own loop
    assert not agent.thread.is_alive()

    # 5. On E-9102's page the reviewer sees where the agent (2 of 3 precedents: reject) and the recompute (the newest
    # human decision for this vendor and type: approve) differ, in words.
    page.goto(f"{app.url}/exceptions?case={SECOND['id']}")
    expect(heading(page, f"{SECOND['id']}:")).to_be_visible()
    expect(
        said.get_by_text(
            "Differs: The agent recommends reject (reject); the dashboard's recompute recommends approve "
            "(approve for payment)."
        )
    ).to_be_visible()
    expect(page.get_by_text("The dashboard's recompute", exact=True)).to_be_visible()  # whose recommendation is whose
    said.scroll_into_view_if_needed()
    shots(page, "example-agent-differs")
