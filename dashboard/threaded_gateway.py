"""A HindsightGateway that is safe to share between Streamlit script threads.

The official client's sync methods run the request on the calling thread's event loop and keep one
aiohttp session bound to the loop that first used it; Streamlit runs every script run on a fresh
thread, so a gateway cached with st.cache_resource fails on the second run with "Event loop is closed".
Here every call runs on ONE worker thread that owns its loop and its gateway, so the session always
meets its own loop. Calls are serialised per process, which costs little: the server itself saturates
near a handful of concurrent recalls. No Streamlit here.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from dashboard.hindsight_gateway import HindsightGateway


class ThreadedGateway:
    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 30.0):
        self.base_url = base_url
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hindsight-gateway")
        self._gateway = self._executor.submit(HindsightGateway, base_url, api_key, timeout).result()

    def __repr__(self) -> str:  # never show the key
        return f"ThreadedGateway({self.base_url!r})"

    def _call(self, name: str, *args, **kwargs):
        return self._executor.submit(lambda: getattr(self._gateway, name)(*args, **kwargs)).result()

    def recall(self, bank_id: str, query: str, **kwargs):
        return self._call("recall", bank_id, query, **kwargs)

    def retain(self, bank_id: str, records):
        return self._call("retain", bank_id, records)

    def list_memories(self, bank_id: str, **kwargs) -> dict:
        return self._call("list_memories", bank_id, **kwargs)

    def close(self) -> None:
        try:
            self._call("close")
        finally:
            self._executor.shutdown(wait=False)
