""" "Why not this one?" on real servers: one planted document per stage of the recall pipeline (tests/why_not_data.py),
the cap and the reranker cut judged as a server with those settings would (`server_knobs`), the tag filter and
k in both server modes; the command's JSON and input errors; the box on the Traces page."""

from __future__ import annotations

import csv
import json
import time
import uuid
from pathlib import Path

import pytest

from dashboard import demo_data
from dashboard.hindsight.documents import group
from dashboard.lab.fix_reach import cases_altered
from dashboard.traces.request import TraceRequest, fetch_trace
from dashboard.traces.scoring import server_knobs
from dashboard.traces.why_not import Change, bank_documents, load_document, tags_admit, why_not
from tests.conftest import shared_demo_of
from tests.helpers import DEMO_CASES, DEMO_TICKETS, demo_case, open_page, run_command, texts
from tests.why_not_data import BATTERY_QUERY, CONVEYOR_QUERY, NORTH, planted_records

PAGE = "views/traces.py"


def test_the_tag_filter_is_the_servers():
    untagged, north, both = (), (NORTH,), (NORTH, "site:south")
    assert [tags_admit(untagged, north, m) for m in ("any", "all", "any_strict", "all_strict", "exact")] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert [tags_admit(("site:south",), north, m) for m in ("any", "all", "any_strict")] == [False, False, False]
    assert (
        tags_admit(both, north, "any_strict")
        and tags_admit(both, north, "all_strict")
        and not tags_admit(both, north, "exact")
    )
    assert not tags_admit(north, both, "all") and tags_admit(north, both, "any")
    assert tags_admit(("x",), (), "exact")  # no request tags: no filter
    assert [
        Change(setting="per_source_cap", value=0).describe(),
        Change(setting="k", value=7).describe(),
        Change(setting="reranker_max_candidates", value=400).describe(),
        Change(setting="tags").describe(),
    ] == ["cap 0 (off)", "raise k to 7", "reranker candidates 400", "no tag filter"]


_PLANTED: dict[int, str] = {}


def planted_bank(live) -> str:
    """The planted documents in a bank of this server, retained once per session (read, never written)."""
    if id(live) not in _PLANTED:
        bank = f"why-not-{uuid.uuid4().hex[:8]}"
        live.gateway.ensure_bank(bank)
        live.gateway.retain(bank, planted_records())
        live.settle(bank)
        deadline = time.monotonic() + 60  # the links the graph arm walks are built after retain
        while live.gateway.bank_stats(bank).get("pending_operations", 0) and time.monotonic() < deadline:
            time.sleep(0.2)
        _PLANTED[id(live)] = bank
    return _PLANTED[id(live)]


def battery_request(bank: str, tags_match: str = "any_strict") -> TraceRequest:
    return TraceRequest(bank=bank, query=BATTERY_QUERY, tags=(NORTH,), tags_match=tags_match)


def documents_returned(traced) -> list[str]:
    return [d.ref for d in group(traced.response).documents]


def test_the_tag_filter_and_k_in_both_server_modes(live):
    bank, gateway = planted_bank(live), live.gateway
    traced = fetch_trace(gateway, battery_request(bank))

    def retrace(request):
        return fetch_trace(gateway, request)

    untagged = load_document(gateway, bank, "bat-untagged")
    assert untagged.tags == () and untagged.memory_ids
    answer = why_not(traced, untagged, 1, retrace)
    assert answer.stage == "tag_filter" and answer.reachable, answer
    assert answer.sentence == (
        "bat-untagged was excluded by the tag filter: its tags (none) do not pass the request's (site:north) "
        "under tags_match any_strict."
    )
    assert answer.changes[0] == Change(setting="tags_match", value="any") and answer.fix.startswith("tags_match any")
    # The fix made on the server: the document comes back within the k the fix names.
    k = next((c.value for c in answer.changes if c.setting == "k"), 1)
    loosened = fetch_trace(gateway, battery_request(bank, "any"))
    assert "bat-untagged" in documents_returned(loosened)[:k]
    assert "bat-untagged" not in documents_returned(loosened)[: k - 1]

    weak = load_document(gateway, bank, "bat-weak")
    answer = why_not(traced, weak, 1, retrace)
    assert answer.stage == "cut_by_k", answer
    (change,) = answer.changes
    assert change.setting == "k" and change.value == documents_returned(traced).index("bat-weak") + 1 > 1
    assert answer.sentence.startswith(f"bat-weak ranks {answer.changes[0].value}") and "below k=1" in answer.sentence
    assert why_not(traced, weak, change.value, retrace).stage == "returned"


def test_each_stage_on_the_verbatim_server(hindsight):
    bank, gateway = planted_bank(hindsight), hindsight.gateway
    battery = fetch_trace(gateway, battery_request(bank))
    conveyor = fetch_trace(
        gateway, TraceRequest(bank=bank, query=CONVEYOR_QUERY, tags=(NORTH,), tags_match="any_strict")
    )

    def judge(traced, document_id: str, k: int, knobs=None):
        return why_not(
            traced, load_document(gateway, bank, document_id), k, lambda _: pytest.fail("no new recall"), knobs
        )

    returned = judge(battery, "bat-hit", 3)
    assert (returned.stage, returned.sentence, returned.fix) == (
        "returned",
        "bat-hit was returned, 1st of 3.",
        "none needed",
    )

    no_arm = judge(battery, "off-topic", 3)
    assert no_arm.stage == "no_arm" and not no_arm.reachable and no_arm.fix.startswith("no setting brings it in")

    # bat-third is 3rd in both arms: a server capping each arm at 1 loses it, and at 3 returns it
    capped = judge(battery, "bat-third", 3, server_knobs(per_source_cap=1))
    assert (capped.stage, capped.fix) == ("source_cap", "per-source cap 3"), capped
    assert capped.sentence == "bat-third was cut by the per-source cap of 1: its best arm rank is 3rd (semantic)."
    assert judge(battery, "bat-third", 3, server_knobs(per_source_cap=3)).stage == "returned"

    # ... and 3rd after fusion: a server handing its reranker 2 candidates loses it
    cut = judge(battery, "bat-third", 3, server_knobs(reranker_max_candidates=2))
    assert (cut.stage, cut.fix) == ("reranker_cut", "reranker candidates 3"), cut
    assert "candidate limit of 2: it was 3rd after fusion" in cut.sentence

    # conv-old says what the query says (1st after fusion) but is eight years old: recency puts a recent one above it
    outranked = judge(conveyor, "conv-old", 1)
    assert (outranked.stage, outranked.fix) == ("outranked", "raise k to 2"), outranked
    assert outranked.sentence.startswith(
        "conv-old was 1st after fusion but outranked in the scoring after it: it ranks 2nd"
    )
    assert documents_returned(conveyor)[1] == "conv-old"  # the server's own order agrees

    # the same trace asked with a small max_tokens: the budget runs out before bat-third
    tight = battery.model_copy(update={"request": battery.request.model_copy(update={"max_tokens": 5})})
    short = judge(tight, "bat-third", 3)
    assert short.stage == "cut_by_k" and "max_tokens 5 ran out before it" in short.sentence, short
    assert short.changes[0].setting == "max_tokens" and short.changes[0].value > 5


def test_the_command_answers_in_json_and_names_a_bad_flag(hindsight, monkeypatch, capsys):
    bank = planted_bank(hindsight)
    base = ("why-not", "--bank", bank, "--query", BATTERY_QUERY, "--tags", NORTH, "--tags-match", "any_strict")
    code, out, err = run_command(
        monkeypatch, capsys, hindsight, bank, *base, "--k", "1", "--document", "bat-untagged", "--json"
    )
    assert code == 0, err
    payload = json.loads(out)
    assert payload["stage"] == "tag_filter" and payload["fix"].startswith("tags_match any")
    assert payload["sentence"].startswith("bat-untagged was excluded by the tag filter")
    # what the looser filter also lets in, counted on the bank: the other untagged documents, never the one asked about
    untagged = {d.id for d in bank_documents(hindsight.gateway, bank) if not d.tags}
    assert "bat-untagged" in untagged and {d["id"] for d in payload["filter_admits"]} == untagged - {"bat-untagged"}

    code, out, err = run_command(
        monkeypatch, capsys, hindsight, bank, *base, "--k", "3", "--document", "bat-third", "--reranker-candidates", "2"
    )
    assert code == 0, err
    assert out.splitlines() == [
        "bat-third was cut by the reranker's candidate limit of 2: it was 3rd after fusion.",
        "fix: reranker candidates 3",
        "it lets in nothing else",
    ]

    for flags, flag in [
        (("--document", "no-such-doc"), "--document"),
        (("--document", "bat-hit", "--k", "0"), "--k"),
        (("--document", "bat-hit", "--max-tokens", "0"), "--max-tokens"),
    ]:
        code, _, err = run_command(monkeypatch, capsys, hindsight, bank, *base, *flags)
        assert code == 2 and err.startswith(f"error: {flag}: "), (flags, err)


def test_the_traces_page_box_says_why_not(point_app, hindsight):
    bank = planted_bank(hindsight)
    point_app(hindsight.env(finance=bank))
    at = open_page(PAGE, bank=bank, q=BATTERY_QUERY, tag=NORTH, match="any_strict")
    at.button(key="trace_run").click().run()
    assert not at.exception, at.exception

    at.text_input(key="why_not_search").input("bat-").run()
    assert {"bat-hit", "bat-untagged", "bat-third"} <= set(at.selectbox(key="why_not_document").options)
    at.selectbox(key="why_not_document").select("bat-untagged")
    at.number_input(key="why_not_k").set_value(1)
    at.button(key="why_not_run").click().run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "bat-untagged was excluded by the tag filter" in shown and "Smallest change: tags_match any" in shown
    assert "it alters no other case of the queue" in shown

    at.selectbox(key="why_not_document").select("bat-third")
    at.number_input(key="why_not_k").set_value(3)
    at.number_input(key="why_not_cap").set_value(1)
    at.button(key="why_not_run").click().run()
    shown = texts(at)
    assert "cut by the per-source cap of 1" in shown and "Smallest change: per-source cap 3" in shown
    assert at.button(key="why_not_queue")  # a server setting: the queue count is offered, run only when pressed
    at.button(key="why_not_queue").click().run()
    assert not at.exception, at.exception
    shown = texts(at)  # no reviewer decided a case here: the blast radius is said to be empty, not left out
    assert (
        "other case(s) of the queue" in shown
        and "Decided cases the fix would change: 0 (no reviewer's decision" in shown
    )


def small_queue(directory: Path, case_ids: tuple[str, ...], ticket_ids: tuple[str, ...]) -> dict[str, str]:
    """The demo queue files cut down to these cases and tickets (a queue run costs a traced recall per case)."""
    env = {}
    for name, source, ids in (
        ("EXCEPTIONS", demo_data.EXCEPTIONS, case_ids),
        ("TICKETS", demo_data.TICKETS, ticket_ids),
    ):
        header, *rows = csv.reader(Path(source).read_text().splitlines(keepends=True))
        path = directory / Path(source).name
        with path.open("w", newline="") as out:
            csv.writer(out).writerows([header, *(r for r in rows if r[0] in ids)])
        env[f"RECALL_REVIEW_{name}_FILE"] = str(path)
    return env


def test_the_queue_count_of_a_fix_runs_only_for_a_server_setting(hindsight, monkeypatch, capsys, tmp_path):
    banks = shared_demo_of(hindsight)
    case = demo_case("E-1004")
    request = TraceRequest(
        bank=banks.finance, query=case.recall_query(), tags=tuple(case.tags), tags_match="all_strict"
    )
    trace = fetch_trace(hindsight.gateway, request)
    last = max(trace.response.trace.rrf_merged, key=lambda c: c.final_rrf_rank)  # its last exact precedent by fusion
    document = trace.labels[last.node_id].document_id
    assert last.final_rrf_rank > 1

    # A server handing its reranker one candidate loses it; the fix is a server setting, so the queue is counted.
    monkeypatch.setenv("RECALL_REVIEW_SUPPORT_BANK", banks.support)
    for name, value in small_queue(tmp_path, ("E-1002", "E-1004", "E-1005"), ("T-2004",)).items():
        monkeypatch.setenv(name, value)
    code, out, err = run_command(
        monkeypatch,
        capsys,
        hindsight,
        banks.finance,
        "why-not",
        "--bank",
        banks.finance,
        "--query",
        request.query,
        "--tags",
        *request.tags,
        "--tags-match",
        "all_strict",
        "--document",
        document,
        "--reranker-candidates",
        "1",
        "--queue",
        "--json",
    )
    assert code == 0, err
    payload = json.loads(out)
    assert payload["stage"] == "reranker_cut" and payload["changes"][0] == {
        "setting": "reranker_max_candidates",
        "value": last.final_rrf_rank,
    }
    queue_ids = {"E-1002", "E-1004", "E-1005", "T-2004"}
    # One candidate per recall leaves every case with several exact precedents only one: E-1004 is such a case.
    assert "E-1004" in payload["queue_cases_altered"] and set(payload["queue_cases_altered"]) <= queue_ids

    # A change of the request alone alters no other case: nothing is recalled to say so.
    answer = why_not(
        trace, load_document(hindsight.gateway, banks.finance, document), 1, lambda _: pytest.fail("no recall")
    )
    assert answer.changes and not any(c.server_wide for c in answer.changes)
    assert cases_altered(None, banks.finance, banks.support, DEMO_CASES, DEMO_TICKETS, server_knobs(), answer) == []
