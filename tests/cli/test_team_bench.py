"""bench-team's protocol client reads how a key landed from the settled page the agent API answers with, as the
browser client reads it from the screen (benches/team.py)."""

from benches.team import agent_landed


def _page(case: str | None, *shown: tuple[str, str]) -> dict:
    return {"query_params": {"case": [case]} if case else {},
            "tree": {"type": "root", "children": [{"type": kind, "props": {"body": body}} for kind, body in shown]}}


def test_a_key_landed_when_the_next_case_is_drawn_and_an_accept_only_with_its_confirmation():
    assert agent_landed(_page("E-1004", ("header", "E-1004: V06 price variance")), "E-1003", accept=False) == "moved"
    assert agent_landed(_page("E-1004", ("header", "E-1003: V02 price variance")), "E-1003", accept=False) is None
    assert agent_landed(_page("E-1003", ("header", "E-1003: V02 price variance")), "E-1003", accept=False) is None
    moved = _page("E-1005", ("header", "E-1005: V03"), ("success", "E-1004 recorded: approve for payment (decision #1)"))
    assert agent_landed(moved, "E-1004", accept=True) == "moved"
    assert agent_landed(_page("E-1005", ("header", "E-1005: V03")), "E-1004", accept=True) is None  # moved, nothing confirmed


def test_a_key_that_could_not_act_landed_when_the_page_said_why():
    refused = _page("E-1003", ("header", "E-1003: V02"), ("warning", "Not recorded: E-1003: someone else holds it"))
    assert agent_landed(refused, "E-1003", accept=True) == "refused"
    end = _page("E-1018", ("header", "E-1018: V09"), ("warning", "E-1018 is the last case of the queue shown: there is no next one."))
    assert agent_landed(end, "E-1018", accept=False) == "said"
    elsewhere = _page("E-1017", ("header", "E-1017: V08"), ("warning", "E-1018 is the last case of the queue shown: there is no next one."))
    assert agent_landed(elsewhere, "E-1017", accept=False) is None  # said of another case, and nothing moved


def test_a_refusal_is_no_landing_and_a_name_gone_after_a_key_is_a_typed_value_lost():
    from benches.team import Cell, Press

    cell = Cell(2, "paced", "quiet", presses=[
        Press(0, "J", "E-1001", 0.4, "E-1002", how="moved"),
        Press(0, "A", "E-1002", 0.5, "E-1002", how="refused"),  # said why, recorded nothing: it did not do what it says
        Press(1, "J", "E-1009", None),  # nothing came of it
        Press(1, "J", "E-1009", 0.6, "E-1010", how="moved", name_kept=False),
    ])
    assert (cell.lost(), cell.refused(), cell.names_lost()) == (2, 1, 1)
    assert cell.times("JA") == [0.4, 0.6]  # times of landed keys only
