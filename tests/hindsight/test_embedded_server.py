"""The embedded server's lifecycle, against the real thing."""

import psutil
import pytest

from dashboard.hindsight.embedded import _alive, health
from dashboard.hindsight.wire import MemoryRecord
from tests.conftest import live_hindsight


@pytest.fixture(scope="module")
def own_hindsight():
    """A server of this module's own: the restart test stops it, never the session's shared one."""
    with live_hindsight() as live:
        yield live


def test_start_retain_recall_restart_keeps_data(own_hindsight):
    gateway, server = own_hindsight.gateway, own_hindsight.server
    bank_id = "lifecycle"
    gateway.ensure_bank(bank_id)
    assert gateway.health()["status"] == "healthy"
    record = MemoryRecord(
        document_id="lifecycle-1",
        content="Vendor V77 price variance approved within tolerance.",
        tags=["vendor:V77", "type:price_variance"],
    )
    gateway.retain(bank_id, [record])

    exact = gateway.recall(bank_id, "price variance V77", tags=record.tags, tags_match="all_strict")
    assert [r.document_id for r in exact.results] == ["lifecycle-1"]
    # all_strict needs every tag: a second tag the record lacks excludes it; any_strict admits it.
    other = ["vendor:V77", "type:tax_mismatch"]
    assert gateway.recall(bank_id, "price variance V77", tags=other, tags_match="all_strict").results == []
    broader = gateway.recall(bank_id, "price variance V77", tags=other, tags_match="any_strict")
    assert [r.document_id for r in broader.results] == ["lifecycle-1"]

    before = server.status()
    server.stop()
    after_stop = server.status()
    assert not after_stop.running and not after_stop.healthy
    assert not _alive(before.api_pid) and not _alive(before.pg_pid)
    assert health(server.url) is None

    assert server.start().healthy
    again = gateway.recall(bank_id, "price variance V77", tags=record.tags, tags_match="all_strict")
    assert [r.text for r in again.results] == [record.content]


def test_the_shared_server_was_never_stopped(hindsight, own_hindsight):
    assert hindsight.settings.api_port != own_hindsight.settings.api_port
    assert hindsight.settings.data_dir != own_hindsight.settings.data_dir
    assert hindsight.server.status().healthy


def test_start_reuses_a_running_server(hindsight):
    first = hindsight.server.status()
    second = hindsight.server.start()
    assert second.healthy and second.api_pid == first.api_pid and second.pg_pid == first.pg_pid


def _listening_addresses(port: int) -> set[str]:
    """IPv4/IPv6 addresses with a socket listening on `port`, read from /proc/net/tcp{,6}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                    found.add(address)
    return found


def test_servers_listen_on_loopback_only(hindsight):
    loopback_v4 = "0100007F"  # 127.0.0.1, little-endian hex
    for port in (hindsight.settings.api_port, hindsight.settings.pg_port):
        assert _listening_addresses(port) == {loopback_v4}, port


def test_the_server_reads_dates_in_the_configured_languages_only(hindsight, bank_id):
    """`HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES` (default `en`; unset, hindsight-api tries ~200 locales on every
    recall) reaches the running hindsight-api, and a date in a query is still read."""
    assert psutil.Process(hindsight.server.status().api_pid).environ()["HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES"] == "en"
    trace = hindsight.gateway.recall(bank_id, "invoices disputed last week", trace=True).trace
    assert trace.query.temporal_constraint["start"] < trace.query.temporal_constraint["end"]
