"""The one thread per app process that reads Hindsight's audit logs into the review store, forward from each bank's
cursor, never on a page's run (`dashboard/app/audit.py` asks it to and shows its progress). No Streamlit here."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError

from dashboard.agents.audit_sync import count_log, sync_bank
from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.store.agent_runs import AgentRunStore

READ_EVERY_S = 30.0  # a bank's log is read again (from its cursor) at most this often
LEASE_S = 300.0  # one reader per bank and store; a reader that died gives its bank up after this
logger = logging.getLogger(__name__)


class AuditReader:
    """One thread reads the banks' audit logs into the review store, forward from each bank's cursor (`sync_bank`),
    never on a page's run. Several instances on one store share a bank's read through a lease kept in the store: the
    one holding it reads, the others show the progress it writes there. A daemon thread: a process that ends stops
    its read halfway, and the next one goes on from the cursor."""

    def __init__(self, gateway: HindsightGateway, store: AgentRunStore, wait_for_pages=lambda: None):
        self._gateway, self._store, self._wait_for_pages = gateway, store, wait_for_pages
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._due: list[str] = []
        self._busy = False
        self._asked: dict[str, float] = {}  # bank -> time.monotonic() of the read last started
        self._stopped = threading.Event()
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.reports: dict[str, object] = {}  # bank -> the last read's SyncReport (the bench and the tests read it)

    def keep_reading(self, bank_ids: tuple[str, ...] | list[str]) -> bool:
        """Read these banks' logs on the reader's thread, unless a read is under way or each was read in the last
        READ_EVERY_S; True when a read was asked for. Never waits."""
        with self._lock:
            if self._stopped.is_set() or self._busy:
                return False
            now = time.monotonic()
            due = [b for b in dict.fromkeys(bank_ids) if now - self._asked.get(b, float("-inf")) >= READ_EVERY_S]
            if not due:
                return False
            for bank in due:
                self._asked[bank] = now
            self._due, self._busy = due, True
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="audit-log", daemon=True)
                self._thread.start()
            self._wake.set()
            return True

    def busy(self) -> bool:
        with self._lock:
            return self._busy

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()

    def _loop(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                due, self._due = self._due, []
            try:
                if due:
                    self._read(due)
            except Exception:  # never let the thread die: the next ask reads again
                logger.exception("the audit log's read failed")
            finally:
                with self._lock:
                    self._busy = False

    def _read(self, bank_ids: list[str]) -> None:
        self._before_each()  # not even a count while the page that asked is running
        on = []
        for bank in bank_ids:  # every bank's count first, so each page says how much there is to read
            try:
                if self._gateway.audit_log_enabled(bank):
                    total, _newest = count_log(self._gateway, self._store, bank)
                    on.append((total - self._store.sync_state(bank).entries, bank))
            except (HindsightError, SQLAlchemyError) as exc:
                logger.warning("could not count the audit log of %s: %s", bank, exc)
                with self._lock:
                    self._asked.pop(bank, None)
        for _behind, bank in sorted(on):  # the shortest backlog first: a small bank is not kept behind a large one
            if self._stopped.is_set():
                return
            self._read_bank(bank)

    def _read_bank(self, bank: str) -> None:
        if not self._lease(bank):
            return  # another instance reads it; the store has its progress
        try:
            self.reports[bank] = sync_bank(
                self._gateway,
                self._store,
                bank,
                before_each=self._before_each,
                keep_going=lambda: not self._stopped.is_set() and self._lease(bank),
            )
        except (HindsightError, SQLAlchemyError) as exc:  # read again at the next ask, from where it stopped
            logger.warning("could not read the audit log of %s: %s", bank, exc)
            with self._lock:
                self._asked.pop(bank, None)
        finally:
            try:
                self._store.release_lease(bank, self.name)
            except SQLAlchemyError:
                pass

    def _lease(self, bank: str) -> bool:
        return self._store.take_lease(bank, self.name, datetime.now(UTC) + timedelta(seconds=LEASE_S))

    def _before_each(self) -> None:
        if not self._stopped.is_set():
            self._wait_for_pages()
