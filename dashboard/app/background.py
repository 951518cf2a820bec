"""The app's background work (the queue's recalls ahead of the reviewer) and the gate that keeps it behind the pages:
main.py marks every page run. No domain here: a kind's pages submit the jobs (finance/pages/recalls.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import streamlit as st

REVIEWERS_FIRST_S = 5.0  # the longest a background recall waits for the pages running to end


class Background:
    """One thread per server process recalls queues in the background (the server is about one core);
    `started` names each job's queue, `drain` waits for every job submitted so far. Reviewers first: a background
    recall starts only while no page of this process is running (`page_run`), or once it has waited REVIEWERS_FIRST_S
    (at 100,000 cases the Overview after a decision ran in ~0.4 s with no background and ~0.75 s beside it)."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefetch")
        self.started: list[tuple] = []
        self._runs = 0  # pages running now
        self._last_run_ended = float("-inf")  # time.monotonic()
        self._no_runs = threading.Condition()

    @contextmanager
    def page_run(self) -> Iterator[None]:
        with self._no_runs:
            self._runs += 1
        try:
            yield
        finally:
            with self._no_runs:
                self._runs -= 1
                self._last_run_ended = time.monotonic()
                self._no_runs.notify_all()

    def after_page_runs(self, quiet_s: float = 0.0) -> None:
        """Wait (off the script thread) until no page runs and none has run for `quiet_s`, at most REVIEWERS_FIRST_S."""
        deadline = time.monotonic() + REVIEWERS_FIRST_S
        with self._no_runs:
            while (left := deadline - time.monotonic()) > 0:
                if self._runs == 0:
                    still = self._last_run_ended + quiet_s - time.monotonic()
                    if still <= 0:
                        return
                    left = min(left, still)
                self._no_runs.wait(left)

    def submit(self, slot: tuple, job: Callable[[], object]) -> Future:
        self.started.append(slot)
        return self._pool.submit(job)

    def drain(self, timeout: float | None = None) -> None:
        self._pool.submit(lambda: None).result(timeout)  # one thread: it runs after every earlier job


@st.cache_resource
def background() -> Background:
    return Background()
