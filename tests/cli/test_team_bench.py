"""bench-team's protocol client reads how a key landed from the settled page the agent API answers with, as the
browser client reads it from the screen (benches/team.py)."""

from benches.team import agent_landed


def _page(case: str | None, *shown: tuple[str, str]) -> dict:
    return {
        "query_params": {"case": [case]} if case else {},
        "tree": {"type": "root", "children": [{"type": kind, "props": {"body": body}} for kind, body in shown]},
    }


def test_a_key_landed_when_the_next_case_is_drawn_and_an_accept_only_with_its_confirmation():
    assert agent_landed(_page("E-1004", ("header", "E-1004: V06 price variance")), "E-1003", accept=False) == "moved"
    assert agent_landed(_page("E-1004", ("header", "E-1003: V02 price variance")), "E-1003", accept=False) is None
    assert agent_landed(_page("E-1003", ("header", "E-1003: V02 price variance")), "E-1003", accept=False) is None
    moved = _page(
        "E-1005", ("header", "E-1005: V03"), ("success", "E-1004 recorded: approve for payment (decision #1)")
    )
    assert agent_landed(moved, "E-1004", accept=True) == "moved"
    assert (
        agent_landed(_page("E-1005", ("header", "E-1005: V03")), "E-1004", accept=True) is None
    )  # moved, nothing confirmed


def test_a_key_that_could_not_act_landed_when_the_page_said_why():
    refused = _page("E-1003", ("header", "E-1003: V02"), ("warning", "Not recorded: E-1003: someone else holds it"))
    assert agent_landed(refused, "E-1003", accept=True) == "refused"
    end = _page(
        "E-1018",
        ("header", "E-1018: V09"),
        ("warning", "E-1018 is the last case of the queue shown: there is no next one."),
    )
    assert agent_landed(end, "E-1018", accept=False) == "said"
    elsewhere = _page(
        "E-1017",
        ("header", "E-1017: V08"),
        ("warning", "E-1018 is the last case of the queue shown: there is no next one."),
    )
    assert agent_landed(elsewhere, "E-1017", accept=False) is None  # said of another case, and nothing moved


def test_a_refusal_is_no_landing_and_a_name_gone_after_a_key_is_a_typed_value_lost():
    from benches.team import Cell, Press

    cell = Cell(
        2,
        "paced",
        "quiet",
        presses=[
            Press(0, "J", "E-1001", 0.4, "E-1002", how="moved"),
            Press(
                0, "A", "E-1002", 0.5, "E-1002", how="refused"
            ),  # said why, recorded nothing: it did not do what it says
            Press(1, "J", "E-1009", None),  # nothing came of it
            Press(1, "J", "E-1009", 0.6, "E-1010", how="moved", name_kept=False),
        ],
    )
    assert (cell.lost(), cell.refused(), cell.names_lost()) == (2, 1, 1)
    assert cell.times("JA") == [0.4, 0.6]  # times of landed keys only


def test_an_accept_refused_because_another_reviewer_decided_the_case_is_counted_apart_not_lost():
    import io

    from benches.team import DECIDED_BY_ANOTHER, Cell, Press, print_report, summarise

    standing = (
        "warning",
        (
            "Not recorded: E-1004 is already decided: approve for payment by Team Reviewer 2, revision 1 "
            "(decision #7). Changing it is a revision: Revise decision, with a reason."
        ),
    )
    assert (
        agent_landed(_page("E-1004", ("header", "E-1004: V06"), standing), "E-1004", accept=True, me="Team Reviewer 1")
        == DECIDED_BY_ANOTHER
    )
    assert (
        agent_landed(_page("E-1004", ("header", "E-1004: V06"), standing), "E-1004", accept=True, me="Team Reviewer 2")
        == "refused"
    )  # its own
    meanwhile = ("warning", "Not recorded yet: Team Reviewer 3 decided this case meanwhile (reject on 7 Dec).")
    assert (
        agent_landed(_page("E-1004", ("header", "E-1004: V06"), meanwhile), "E-1004", accept=True, me="Team Reviewer 1")
        == DECIDED_BY_ANOTHER
    )
    held = ("warning", "Not recorded: E-1004: someone else holds it")
    assert (
        agent_landed(_page("E-1004", ("header", "E-1004: V06"), held), "E-1004", accept=True, me="Team Reviewer 1")
        == "refused"
    )

    cell = Cell(
        2,
        "paced",
        "quiet",
        presses=[
            Press(0, "J", "E-1003", 0.4, "E-1004", how="moved"),
            Press(0, "A", "E-1004", 0.5, "E-1004", how=DECIDED_BY_ANOTHER),  # right to refuse: not lost, not landed
            Press(1, "A", "E-1005", 0.5, "E-1005", how="refused"),
            Press(1, "J", "E-1005", 0.6, "E-1006", how="moved", name_kept=False),
        ],
    )
    assert (cell.lost(), cell.refused(), cell.decided_by_another(), cell.names_lost()) == (1, 1, 1, 1)
    assert cell.times("JA") == [0.4, 0.6]
    report = summarise([cell], 3.0, [])
    row = report["rows"][0]
    assert (row["lost"], row["decided_by_another"], row["names_lost"]) == (1, 1, 1)
    out = io.StringIO()
    print_report(report, out)
    header, _rule, line = out.getvalue().strip().splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [v.strip() for v in line.split("|")]))
    assert (cells["keys lost"], cells["A refused: decided by another"], cells["typed values lost"]) == (
        "1 of 4 (1 refused)",
        "1",
        "1",
    )
