"""What the home page shows: the server, the banks and the queues. No Streamlit here."""

from __future__ import annotations

from pydantic import BaseModel, Field

from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.errors import HindsightError, HindsightUnavailable
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryMode
from dashboard.queue_files import QueueFileError, shared_rows
from dashboard.settings import Settings
from dashboard.support.models import Ticket


class BankSummary(BaseModel):
    bank_id: str
    role: str
    memories: int | None = None
    documents: int | None = None
    memory_mode: MemoryMode | None = None  # how the server stores this bank's documents, as it says
    error: str | None = None


class QueueSummary(BaseModel):
    name: str
    kind: str  # exception | ticket
    bank_id: str  # the bank its decisions go to
    size: int | None = None
    ids: list[str] = Field(default_factory=list, repr=False)  # the cases' ids, for their figures
    error: str | None = None


class ServerSummary(BaseModel):
    url: str
    embedded: bool
    healthy: bool
    version: str | None = None
    error: str | None = None


class Overview(BaseModel):
    server: ServerSummary
    banks: list[BankSummary]
    queues: list[QueueSummary]


def _server(gateway: HindsightGateway, settings: Settings) -> ServerSummary:
    try:
        healthy = gateway.health().get("status") == "healthy"
        return ServerSummary(url=settings.base_url, embedded=settings.embedded, healthy=healthy, version=gateway.version())
    except HindsightUnavailable as exc:
        return ServerSummary(url=settings.base_url, embedded=settings.embedded, healthy=False, error=str(exc))


def _bank(gateway: HindsightGateway, bank_id: str, role: str) -> BankSummary:
    try:
        stats, mode = gateway.bank_stats(bank_id), gateway.memory_mode(bank_id)
    except HindsightError as exc:
        return BankSummary(bank_id=bank_id, role=role, error=str(exc))
    return BankSummary(
        bank_id=bank_id, role=role, memories=stats.get("total_nodes"), documents=stats.get("total_documents"), memory_mode=mode
    )


def _queue(name: str, kind: str, bank_id: str, path, model) -> QueueSummary:
    try:
        ids = [row.id for row in shared_rows(path, model)]
    except QueueFileError as exc:
        return QueueSummary(name=name, kind=kind, bank_id=bank_id, error=str(exc))
    return QueueSummary(name=name, kind=kind, bank_id=bank_id, size=len(ids), ids=ids)


def build_overview(gateway: HindsightGateway, settings: Settings) -> Overview:
    server = _server(gateway, settings)
    banks = [(settings.finance_bank, "finance precedents"), (settings.support_bank, "support interactions")]
    return Overview(
        server=server,
        banks=[
            _bank(gateway, bank_id, role) if server.healthy else BankSummary(bank_id=bank_id, role=role, error="server unreachable")
            for bank_id, role in banks
        ],
        queues=[
            _queue("Finance exceptions", "exception", settings.finance_bank, settings.exceptions_file, ExceptionCase),
            _queue("Support tickets", "ticket", settings.support_bank, settings.tickets_file, Ticket),
        ],
    )
