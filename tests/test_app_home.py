"""The home page, through Streamlit's AppTest, against the real server and against no server."""

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.seed import seed_demo_data
from dashboard.settings import load_settings
from tests.conftest import free_port

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def _run(monkeypatch, env: dict[str, str]) -> AppTest:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def test_home_shows_server_banks_and_queues(hindsight, monkeypatch):
    env = hindsight.env(finance="home-fin", support="home-sup")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    seed_demo_data(hindsight.gateway, load_settings(), log=lambda _: None)

    at = _run(monkeypatch, env)
    assert "Hindsight 1.1.0 is healthy" in at.success[0].value
    banks = at.dataframe[0].value.set_index("bank")
    assert banks.loc["home-fin", "memories"] == 61 and banks.loc["home-sup", "memories"] == 18
    assert {m.label: m.value for m in at.metric} == {"Finance exceptions": "18", "Support tickets": "12"}


def test_home_without_a_server_says_so(monkeypatch, tmp_path):
    at = _run(monkeypatch, {"RECALL_REVIEW_API_PORT": str(free_port()), "RECALL_REVIEW_DATA_DIR": str(tmp_path)})
    assert "is not reachable" in at.error[0].value
    assert "server start" in at.error[0].value
    assert {m.label for m in at.metric} == {"Finance exceptions", "Support tickets"}
