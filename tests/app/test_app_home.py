"""The home page, through Streamlit's AppTest, against the real server and against no server."""

from streamlit.testing.v1 import AppTest

from dashboard.cli.seed import seed_demo_data
from dashboard.processes import free_port
from dashboard.settings import load_settings
from tests.helpers import open_page


def _run() -> AppTest:
    return open_page()


def test_home_shows_server_banks_and_queues(hindsight, point_app):
    point_app(hindsight.env(finance="home-fin", support="home-sup"))
    seed_demo_data(hindsight.gateway, load_settings(), log=lambda _: None)

    at = _run()
    assert "Hindsight 1.1.0 is healthy" in at.success[0].value
    banks = at.table[0].value.set_index("memory store")  # a static table: it wraps, where a grid cut its words
    assert banks.loc["home-fin", "memory entries"] == "61" and banks.loc["home-sup", "memory entries"] == "18"
    assert banks.loc["home-fin", "kept as"] == "each record kept word for word, no summaries across records"
    # the server's own terms stay in the heading's tooltip, for who asks
    assert "home-fin: texts stored verbatim, observations off" in next(
        s for s in at.subheader if s.value.startswith("Where")
    ).proto.help.replace("\\", "")
    assert {m.label: m.value for m in at.metric} == {"Finance exceptions": "18", "Support tickets": "12"}
    assert "0 decided, 18 open." in [t.value for t in at.text]  # the Overview's figures, counted by the same function


def test_home_without_a_server_says_so(point_app, tmp_path):
    point_app({"RECALL_REVIEW_API_PORT": str(free_port()), "RECALL_REVIEW_DATA_DIR": str(tmp_path)})
    at = _run()
    assert "is not reachable" in at.error[0].value
    assert "server start" in at.error[0].value
    assert {m.label for m in at.metric} == {"Finance exceptions", "Support tickets"}
