"""Shared fixtures. `hindsight` is a REAL embedded Hindsight server, started once per test session
on free loopback ports in a temporary data directory, and stopped (by PID) at the end. It stores texts
verbatim (no LLM). `hindsight_llm` is the same server as deployed: a real hindsight-api whose LLM is our
deterministic stand-in, so it extracts facts and consolidates observations; `live` runs a test in both."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
import streamlit as st

from dashboard import processes
from dashboard.app import resources
from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.embedded import EmbeddedServer, scratch_database
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryRecord
from dashboard.processes import free_port
from dashboard.settings import Settings, signing_secret_of
from dashboard.store.db import make_engine
from dashboard.trust.origin import Kind, origin_of, signed_metadata
from tests.component_scan import scan_components_once
from tests.llm_double import LLMDouble
from tests.oidc_provider import Provider, client_for, oidc_provider

pytest_plugins = ["tests.grouping"]  # which worker runs which file

SIGNING_KEY = (
    "recall-review-suite-signing-key"  # RECALL_REVIEW_SIGNING_KEY of every process the suite points at a server
)
SIGNING_SECRET = signing_secret_of(SIGNING_KEY)


PROVEN = partial(
    origin_of, SIGNING_SECRET
)  # who wrote a record, as the processes the suite points at a server check it


def signed_as(
    record: MemoryRecord, kind: Kind = "seed", who: str | None = None, bank: str | None = None
) -> MemoryRecord:
    """`record` as this dashboard writes it with the suite's key: the demo seed by default (`python -m dashboard seed`);
    a reviewer's decision as revision 1 of its case in `bank`, as the review store signs one."""
    from tests.finance_helpers import bound_as

    bound = bound_as(record, bank) if kind == "reviewer" else None
    return record.model_copy(
        update={
            "metadata": signed_metadata(
                SIGNING_SECRET, record.document_id, record.tags, record.metadata, kind, who, bound
            )
        }
    )


seeded = signed_as


# Real recorded responses of Hindsight 1.1.0 (copied from shared/fixtures, embeddings stripped).
APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app" / "main.py")
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hindsight-1.1.0"


@dataclass
class LiveHindsight:
    settings: Settings
    server: EmbeddedServer
    gateway: HindsightGateway
    llm: LLMDouble | None = None  # the stand-in LLM behind an extracting server

    @property
    def mode(self) -> str:
        return "extracting" if self.llm is not None else "verbatim"

    def env(self, *, prefetch: bool = False, **banks: str) -> dict[str, str]:
        """Environment that points the dashboard (settings, AppTest, subprocesses) at this server (`prefetch`: the
        queue's background recall, the product's default)."""
        env = {
            "RECALL_REVIEW_DATA_DIR": str(self.settings.data_dir),
            "RECALL_REVIEW_API_PORT": str(self.settings.api_port),
            "RECALL_REVIEW_PG_PORT": str(self.settings.pg_port),
            # No blind second review unless a test asks for it: other tests decide cases the sample would hold.
            "RECALL_REVIEW_SECOND_REVIEW_SHARE": "0",
            # No background recall of the whole queue unless a test checks it: it is ~36 recalls per fresh bank,
            # the server's largest single load in the suite, and most tests open one or two cases.
            "RECALL_REVIEW_PREFETCH": str(prefetch).lower(),
            # One deployment key for every process and store of the suite: the demo seed signed once is proven to each app.
            "RECALL_REVIEW_SIGNING_KEY": SIGNING_KEY,
        }
        env.update({f"RECALL_REVIEW_{role.upper()}_BANK": bank for role, bank in banks.items()})
        return env

    def settle(self, *banks: str) -> None:
        """Wait until the server has consolidated what was retained into these banks (no-op when verbatim)."""
        for bank in banks:
            self.gateway.wait_until_consolidated(bank)


@contextmanager
def live_hindsight(llm: LLMDouble | None = None) -> Iterator[LiveHindsight]:
    """A real embedded Hindsight of its own (data dir, ports), stopped and removed on exit whatever happens.
    With `llm`, the server extracts facts and consolidates observations through that stand-in LLM."""
    # Not under pytest's 0700 tmp root: as root, PostgreSQL runs as `nobody`, who must reach it.
    data_dir = Path(tempfile.mkdtemp(prefix="recall-review-test-"))
    os.chmod(data_dir, 0o755)
    llm_settings = (
        {
            "llm_provider": "openai",
            "llm_base_url": llm.base_url,
            "llm_api_key": "x",
            "llm_model": llm.model,
            "enable_observations": True,
        }
        if llm is not None
        else {}
    )
    settings = Settings(data_dir=data_dir, api_port=free_port(), pg_port=free_port(), **llm_settings)
    server = EmbeddedServer(settings)
    forget = processes.on_exit(server.stop)  # whatever ends this process, the server goes with it
    try:
        server.start()
        gateway = HindsightGateway(settings.base_url)
        try:
            yield LiveHindsight(settings, server, gateway, llm)
        finally:
            gateway.close()
    finally:
        server.stop()
        forget()
        shutil.rmtree(data_dir, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    # A run stopped by SIGTERM (a CI timeout) or SIGINT stops every server it started, in each worker.
    processes.stop_children_on_signals()
    scan_components_once()  # each AppTest's first run scanned all installed packages again (tests/component_scan.py)


@pytest.fixture(scope="session")
def hindsight() -> Iterator[LiveHindsight]:
    """The verbatim server: no LLM, each retained text stored as one memory."""
    with live_hindsight() as live:
        yield live


@pytest.fixture(scope="session")
def hindsight_llm() -> Iterator[LiveHindsight]:
    """The server as deployed: a real hindsight-api whose LLM is the deterministic stand-in (tests/llm_double.py),
    so retain rewrites each document into several facts and consolidates observations across documents."""
    with LLMDouble() as llm, live_hindsight(llm) as live:
        yield live


@pytest.fixture(scope="session")
def oidc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """A real OpenID provider (tests/oidc) for the page tests that seed a signed-in session: the app reads its
    issuer from it. The browser's sign-in tests start their own, with users (tests/e2e/test_sign_in.py)."""
    with oidc_provider(tmp_path_factory.mktemp("oidc"), users=[], clients=[client_for(8501)]) as provider:
        yield provider


@pytest.fixture(params=["verbatim", "extracting"])
def live(request: pytest.FixtureRequest) -> LiveHindsight:
    """The test runs once against each server mode."""
    return request.getfixturevalue("hindsight" if request.param == "verbatim" else "hindsight_llm")


def review_database(settings: Settings):
    """A fresh PostgreSQL database for the review store in the embedded pg0, dropped after: a context yielding its URL."""
    return scratch_database(settings.pg_port, prefix="review")


@pytest.fixture(params=["sqlite", "postgresql"])
def review_store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The review store on both engines: None (SQLite in the data directory) or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    with review_database(request.getfixturevalue("hindsight").settings) as url:
        yield url


@pytest.fixture
def review_engine(review_store_url: str | None, tmp_path: Path):
    engine = make_engine(review_store_url, tmp_path / "store")
    yield engine
    engine.dispose()


def forget_banks(live: LiveHindsight, *banks: str) -> None:
    """Delete banks a test made for itself, once it is done with them. Each bank the session's server keeps makes every
    later query dearer: hindsight-api gives each bank vector indexes of its own on the one memory table, and each
    statement on that table is planned over all of them. Measured on a fresh server, then with 240 more banks (about
    what a worker's session used to leave): a demo clone 3.6 -> 6.7 s of the server's CPU (PostgreSQL's part
    0.6 -> 3.2 s), the 18 demo cases' recalls 2.6 -> 3.7 s (0.5 -> 2.0 s); with those banks deleted again, 2.1 s.
    Cleaning up, not part of any test: a bank already gone (the test deleted it) or a server a test stopped is no
    failure of the test, so what the server says here is not checked."""
    for bank in banks:
        try:
            live.gateway.delete_bank(bank)
        except Exception:  # noqa: BLE001 - see above
            pass


@pytest.fixture
def bank_id(hindsight: LiveHindsight) -> Iterator[str]:
    """A fresh, empty bank for one test (deleted after it: `forget_banks`)."""
    bank = f"test-{uuid.uuid4().hex[:10]}"
    hindsight.gateway.ensure_bank(bank)
    yield bank
    forget_banks(hindsight, bank)


@dataclass
class DemoBanks:
    finance: str
    support: str


def seed_demo_banks(live: LiveHindsight) -> DemoBanks:
    """Fresh finance and support banks holding the demo precedents and support history, consolidated: the
    session's seeded template (`shared_demo_of`) copied by the server, faster than seeding (with an LLM, ~5x)."""
    template = shared_demo_of(live)
    suffix = uuid.uuid4().hex[:8]
    banks = DemoBanks(finance=f"fin-{suffix}", support=f"sup-{suffix}")
    live.gateway.clone_banks({template.finance: banks.finance, template.support: banks.support})
    return banks


def _seed_template(live: LiveHindsight) -> DemoBanks:
    from dashboard.cli.seed import finance_records, seed_bank, support_records

    suffix = uuid.uuid4().hex[:8]
    banks = DemoBanks(finance=f"demo-fin-{suffix}", support=f"demo-sup-{suffix}")
    seed_bank(live.gateway, banks.finance, finance_records(), sign=seeded)
    seed_bank(live.gateway, banks.support, support_records(), sign=seeded)
    live.settle(banks.finance, banks.support)
    return banks


@pytest.fixture
def demo_banks(hindsight: LiveHindsight) -> Iterator[DemoBanks]:
    """Fresh demo banks on the verbatim server, for one test (deleted after it: `forget_banks`)."""
    banks = seed_demo_banks(hindsight)
    yield banks
    forget_banks(hindsight, banks.finance, banks.support)


@pytest.fixture
def demo_banks_read_only(hindsight: LiveHindsight) -> Iterator[DemoBanks]:
    """The session's demo banks on the verbatim server, for a test that only reads them (a clone of its own costs
    ~2.7 s of server CPU): see `unchanged`."""
    yield from unchanged(hindsight, shared_demo_of(hindsight))


@pytest.fixture
def live_demo_banks(live: LiveHindsight) -> Iterator[DemoBanks]:
    """Fresh demo banks on the server of the test's mode (see `live`): for a test that writes to them (deleted after
    it: `forget_banks`)."""
    banks = seed_demo_banks(live)
    yield banks
    forget_banks(live, banks.finance, banks.support)


_SHARED_DEMO: dict[int, DemoBanks] = {}


def shared_demo_of(live: LiveHindsight) -> DemoBanks:
    """The demo banks on this server, seeded once per session (with an LLM ~50 s): read them, never write."""
    if id(live) not in _SHARED_DEMO:
        _SHARED_DEMO[id(live)] = _seed_template(live)
    return _SHARED_DEMO[id(live)]


_SEEDED_FINANCE: dict[int, str] = {}


def seeded_finance_bank(live: LiveHindsight) -> str:
    """A fresh bank holding the demo's finance records as `python -m dashboard seed` retains them (signed as the demo
    seed's: records of unknown origin would be escalated, finance.policy), copied by the server from a template seeded
    once per session and server: a copy
    of the 61 records costs about half of retaining them again (measured: ~2.6 s of the server's CPU against ~5.5 s;
    py-spy on tests/app/test_finance_app.py: its twelve seeds were 42% of the file's time). Never write to the template;
    delete the copy after the test (`forget_banks`)."""
    from dashboard.cli.seed import finance_records, seed_bank

    if id(live) not in _SEEDED_FINANCE:
        template = f"demo-fin-seeded-{uuid.uuid4().hex[:8]}"
        seed_bank(live.gateway, template, finance_records(), sign=seeded)
        live.settle(template)
        _SEEDED_FINANCE[id(live)] = template
    bank = f"fin-{uuid.uuid4().hex[:8]}"
    live.gateway.clone_banks({_SEEDED_FINANCE[id(live)]: bank})
    return bank


def unchanged(live: LiveHindsight, banks: DemoBanks) -> Iterator[DemoBanks]:
    """Yields the shared banks, then fails the test if it changed a document of theirs: every later test of the
    worker reads them, and every clone is copied from them. A test that writes takes `demo_banks`."""
    from dashboard.cli.seed import stored_documents

    before = {bank: stored_documents(live.gateway, bank) for bank in (banks.finance, banks.support)}
    yield banks
    after = {bank: stored_documents(live.gateway, bank) for bank in before}
    assert after == before, "a test given the shared demo banks wrote to them: give it `demo_banks`"


@pytest.fixture
def shared_demo(live: LiveHindsight) -> Iterator[DemoBanks]:
    """The session's demo banks on the server of the test's mode: for tests that only read them."""
    yield from unchanged(live, shared_demo_of(live))


@pytest.fixture
def point_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Point the Streamlit app (AppTest runs it in this process) at `env`: HINDSIGHT_API_URL unset,
    Streamlit caches cleared, and a decision log of its own. Returns that log."""

    def point(env: dict[str, str], outbox: Outbox | None = None) -> Outbox:
        monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        outbox = outbox or Outbox(tmp_path / "decisions.sqlite3", signing_key=SIGNING_SECRET)
        monkeypatch.setattr(resources, "outbox", lambda: outbox)
        st.cache_resource.clear()
        st.cache_data.clear()
        return outbox

    return point


@pytest.fixture(scope="module")
def module_demo_banks(hindsight: LiveHindsight) -> Iterator[DemoBanks]:
    """Fresh demo banks on the verbatim server shared by the tests of one module, each of which decides cases no other
    test of the module opens (a decision reaches the bank, and the next recall of a case like it finds it)."""
    banks = seed_demo_banks(hindsight)
    yield banks
    forget_banks(hindsight, banks.finance, banks.support)


@pytest.fixture
def demo_app(hindsight: LiveHindsight, point_app, module_demo_banks: DemoBanks) -> Outbox:
    """The app (AppTest) pointed at the module's demo banks, with a decision log of the test's own (returned), for the
    page tests that decide a case: a copy of the demo per module, not per test (under load a copy took 10-24 s)."""
    return point_app(hindsight.env(finance=module_demo_banks.finance, support=module_demo_banks.support))
