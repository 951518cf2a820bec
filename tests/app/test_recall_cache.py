"""Recall costs without a server: the recall cache, the freshness stamps, the bounded trace store, recall_many's bounds and order."""

import asyncio
import contextlib
import threading
from collections import Counter
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from dashboard.app.recall_cache import RecallCache
from dashboard.delivery.outbox import Outbox
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import CaseKey
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import RecallResponse
from dashboard.queue_files import load_rows
from dashboard.review.freshness import EVERYTHING, Freshness
from dashboard.traces.request import TracedRecall, TraceRequest, TraceStore
from tests.helpers import someone_waits_in_flight

A = CaseKey(vendor_code="V01", exception_type="price_variance")
B = CaseKey(vendor_code="V02", exception_type="price_variance")


def test_cache_hit_miss_ttl_and_bound():
    now = [0.0]
    cache = RecallCache(max_entries=2, ttl_s=10, clock=lambda: now[0])
    assert cache.get(("bank", A.scope, 3)) is None
    cache.put(("bank", A.scope, 3), "a")
    assert cache.get(("bank", A.scope, 3)) == "a" and cache.get(("bank", A.scope, 4)) is None
    cache.put(("bank", B.scope, 3), "b")
    cache.put(("bank", "other", 3), "c")
    assert len(cache) == 2  # bounded: the least recently used went
    now[0] = 11
    assert cache.get(("bank", B.scope, 3)) is None  # expired


@pytest.mark.parametrize("answer", ["the recall", None], ids=["answered", "failed"])
def test_a_recall_in_flight_is_awaited_not_asked_twice(monkeypatch, answer):
    reader_waits = someone_waits_in_flight(monkeypatch)
    cache, key = RecallCache(), ("bank", A.scope, 3)
    in_flight = threading.Event()

    def background() -> None:
        with contextlib.suppress(RuntimeError), cache.computing(key):
            in_flight.set()
            assert reader_waits.wait(30)  # the reader waits on this computation before it ends
            if answer is None:
                raise RuntimeError("the server refused")
            cache.put(key, answer)

    worker = threading.Thread(target=background)
    worker.start()
    assert in_flight.wait(30)
    got = []
    reader = threading.Thread(target=lambda: got.append(cache.get_or_compute(key, lambda: "asked again", wait_s=600)))
    reader.start()
    worker.join(30)
    reader.join(30)  # a failed computation releases its reader too, long before its 600 s
    # the answer shared; after a failure the reader asks itself
    assert not reader.is_alive() and got == [("the recall", False) if answer else ("asked again", True)]


def test_sessions_asking_the_same_recall_at_once_share_one_computation(monkeypatch):
    from dashboard.app import recall_cache

    waiting = threading.Semaphore(0)

    class Counted(threading.Event):
        def wait(self, timeout=None):
            waiting.release()
            return super().wait(timeout)

    monkeypatch.setattr(recall_cache, "threading", SimpleNamespace(Lock=threading.Lock, Event=Counted))
    cache, key, asked = RecallCache(), ("bank", A.scope, 3), Counter()
    release = threading.Event()

    def slow_recall() -> str:
        asked["server"] += 1
        assert release.wait(30)  # on the wire until every other session waits for it (or asked itself)
        return "the recall"

    got = []
    sessions = [
        threading.Thread(target=lambda: got.append(cache.get_or_compute(key, slow_recall, wait_s=600)))
        for _ in range(8)
    ]
    for s in sessions:
        s.start()
    for _ in range(7):
        assert waiting.acquire(timeout=30), "a session did not wait for the recall on the wire"
    release.set()
    for s in sessions:
        s.join(30)
    assert asked["server"] == 1 and sorted(got) == [("the recall", False)] * 7 + [("the recall", True)]
    assert cache.get_or_compute(key, slow_recall, wait_s=600) == ("the recall", False)  # then from the cache


def test_a_decision_moves_only_its_scope_and_a_late_delivery_moves_every_scope(tmp_path):
    fresh = Freshness(Outbox(tmp_path / "store.sqlite3").engine)
    assert fresh.stamps("bank", [A.scope, B.scope]) == {A.scope: 0, B.scope: 0}
    fresh.bump("bank", A.scope)
    fresh.bump("bank", A.scope)
    assert (
        fresh.stamps("bank", [A.scope, B.scope]) == {A.scope: 2, B.scope: 0} and fresh.stamp("other bank", A.scope) == 0
    )
    fresh.bump("bank", EVERYTHING)
    assert fresh.stamps("bank", [A.scope, B.scope]) == {A.scope: 3, B.scope: 1}


def test_trace_store_keeps_at_most_its_bound():
    class Gateway:
        calls = 0

        def recall(self, bank_id, query, **kwargs):
            self.calls += 1
            assert kwargs["trace"] is True
            return RecallResponse()

    store, gw = TraceStore(capacity=3), Gateway()
    requests = [TraceRequest(bank="b", query=f"q{i}") for i in range(10)]
    for r in requests:
        store.get_or_fetch(gw, r)
        assert len(store) <= 3
    assert len(store) == 3 and store.requests() == requests[:-4:-1]
    store.get_or_fetch(gw, requests[-1])
    assert gw.calls == 10  # a kept trace is not fetched again
    store.put(TracedRecall(request=requests[0], fetched_at=datetime.now(UTC), response=RecallResponse()))
    assert len(store) == 3


def test_recall_many_bounds_concurrency_keeps_order_and_reports_progress():
    gw = HindsightGateway("http://127.0.0.1:9")  # never contacted: the jobs are local coroutines
    try:
        state = {"in_flight": 0, "max": 0}

        def job(i):
            async def run():
                state["in_flight"] += 1
                state["max"] = max(state["max"], state["in_flight"])
                await asyncio.sleep(0.01)
                state["in_flight"] -= 1
                if i == 5:
                    raise ValueError("job 5 failed")
                return i

            return run

        seen, arrived = [], []

        def on_result(i, result):  # each result is handed over as it finishes, before the later jobs end
            arrived.append((i, result, seen[-1][0] if seen else 0))

        results = gw.recall_many(
            [job(i) for i in range(20)], progress=lambda done, total: seen.append((done, total)), on_result=on_result
        )
        assert [r for i, r in enumerate(results) if i != 5] == [i for i in range(20) if i != 5]
        assert isinstance(results[5], ValueError)
        assert state["max"] == 4
        assert seen == [(i, 20) for i in range(1, 21)]
        assert sorted(i for i, _r, _done in arrived) == list(range(20))
        assert all(r is results[i] for i, r, _done in arrived)
        assert [done for _i, _r, done in arrived] == list(range(20))  # job n's result came before progress n+1
    finally:
        gw.close()


def test_bench_ratio_verdicts():
    from benches.recall import Report, synthetic_trace

    rep = Report()
    rep.ratio("replay 3,000 candidates", 12.0, target_of="replay")
    rep.ratio("dashboard overhead (two-stage vs the same raw client calls)", 1.2, target_of="overhead")
    rep.ratio("growth 1000 -> 10000 memories", 5.0)  # reported, not judged
    assert [r["verdict"] for r in rep.ratios] == ["PASS", "MISS", None]
    assert len(synthetic_trace(300).rrf_merged) == 300


# -- the bench's synthetic data: what the benchmark's figures rest on ---------------------------------
@pytest.mark.parametrize("size", [0, 1, 40, 1000])
def test_bench_records_are_deterministic_distinct_and_sized(size):
    from benches import data as bench_data

    first = bench_data.records(size)
    assert len(first) == size
    assert first == bench_data.records(size)  # same size, same records: a resumed seed sends the same data
    assert len({r.document_id for r in first}) == size
    for record in first:
        vendor, etype = record.metadata["vendor_code"], record.metadata["exception_type"]
        assert record.tags == [f"vendor:{vendor}", f"type:{etype}", "kind:decision"]
        assert f"Vendor {vendor} " in record.content and f"Decision: {record.metadata['outcome']}." in record.content


def test_bench_precedents_are_skewed_as_claimed():
    """A few vendors dominate (Zipf-like), types are uneven, and each (vendor, type) leans to one outcome."""
    from benches import data as bench_data

    data = bench_data.precedents(2000)
    by_vendor = Counter(p.vendor_code for p in data).most_common()
    assert len(by_vendor) == bench_data.VENDORS  # every vendor appears at 2,000 records
    top_vendor, top_count = by_vendor[0]
    assert top_vendor == bench_data.vendor_code(0) and 0.18 < top_count / len(data) < 0.35
    assert top_count > 10 * by_vendor[len(by_vendor) // 2][1]  # far above the median vendor
    by_type = Counter(p.exception_type for p in data).most_common()
    assert [t for t, _ in by_type[:2]] == ["price_variance", "quantity_mismatch"]
    assert by_type[0][1] / len(data) > 0.33 and by_type[0][1] > 3 * by_type[-1][1]  # uneven, not one in five each
    groups: dict[tuple[str, str], Counter] = {}
    for p in data:
        groups.setdefault((p.vendor_code, p.exception_type), Counter())[p.outcome] += 1
    big = {key: outcomes for key, outcomes in groups.items() if sum(outcomes.values()) >= 40}
    assert len(big) >= 5
    for key, outcomes in big.items():
        assert outcomes.most_common(1)[0][1] / sum(outcomes.values()) > 0.65, (key, outcomes)
    assert len({outcomes.most_common(1)[0][0] for outcomes in big.values()}) == 3  # the lean differs between groups


def test_bench_cases_are_deterministic_per_seed_and_round_trip_through_csv(tmp_path):
    from benches import data as bench_data

    cases = bench_data.cases(50)
    assert len(cases) == 50 and len({c.id for c in cases}) == 50
    assert cases == bench_data.cases(50)
    assert cases != bench_data.cases(50, seed=bench_data.SEED + 2)  # the seed drives them
    vendors = {bench_data.vendor_code(i) for i in range(bench_data.VENDORS)}
    assert {c.vendor_code for c in cases} <= vendors
    assert Counter(c.vendor_code for c in cases).most_common(1)[0][0] == bench_data.vendor_code(0)
    path = bench_data.write_cases_csv(tmp_path / "q" / "cases.csv", cases)
    assert load_rows(path, ExceptionCase) == cases
