"""One gateway shared by many threads, as st.cache_resource shares it between script runs."""

import threading
from concurrent.futures import ThreadPoolExecutor

from dashboard.hindsight.wire import MemoryRecord


def test_one_gateway_serves_fresh_threads_one_after_another_and_at_once(hindsight, bank_id):
    gateway = hindsight.gateway
    gateway.retain(
        bank_id, [MemoryRecord(document_id="t-1", content="Vendor V09 missing receipt", tags=["vendor:V09"])]
    )

    results, errors = [], []

    def recall_once():
        try:
            results.append(
                [
                    r.document_id
                    for r in gateway.recall(
                        bank_id, "missing receipt", tags=["vendor:V09"], tags_match="any_strict"
                    ).results
                ]
            )
        except Exception as exc:  # the bug this guards against: "Timeout context manager should be used inside a task"
            errors.append(repr(exc))

    for _ in range(3):  # a fresh thread per call, like Streamlit's script runs
        thread = threading.Thread(target=recall_once)
        thread.start()
        thread.join()
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(8):
            pool.submit(recall_once)
    assert errors == []
    assert results == [["t-1"]] * 11
