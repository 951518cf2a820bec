"""What the home page shows: the server, the banks and the queues. No Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from dashboard.hindsight.errors import HindsightError, HindsightUnavailable
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryMode
from dashboard.queue_files import QueueFileError
from dashboard.review.queue_kind import QueueKind
from dashboard.settings import Settings


class BankSummary(BaseModel):
    bank_id: str
    role: str
    memories: int | None = None
    documents: int | None = None
    memory_mode: MemoryMode | None = None  # how the server stores this bank's documents, as it says
    error: str | None = None


class QueueSummary(BaseModel):
    name: str
    kind: str  # its case kind (QueueKind.name)
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
        return ServerSummary(
            url=settings.base_url, embedded=settings.embedded, healthy=healthy, version=gateway.version()
        )
    except HindsightUnavailable as exc:
        return ServerSummary(url=settings.base_url, embedded=settings.embedded, healthy=False, error=str(exc))


def _bank(gateway: HindsightGateway, bank_id: str, role: str) -> BankSummary:
    try:
        stats, mode = gateway.bank_stats(bank_id), gateway.memory_mode(bank_id)
    except HindsightError as exc:
        return BankSummary(bank_id=bank_id, role=role, error=str(exc))
    return BankSummary(
        bank_id=bank_id,
        role=role,
        memories=stats.get("total_nodes"),
        documents=stats.get("total_documents"),
        memory_mode=mode,
    )


def _queue(kind: QueueKind, settings: Settings) -> QueueSummary:
    queue = settings.queue(kind.key)
    summary = QueueSummary(name=kind.title, kind=kind.name, bank_id=queue.bank or kind.default_bank)
    try:
        ids = [row.id for row in kind.load(queue.cases or kind.default_cases)]
    except QueueFileError as exc:
        return summary.model_copy(update={"error": str(exc)})
    return summary.model_copy(update={"size": len(ids), "ids": ids})


def build_overview(gateway: HindsightGateway, settings: Settings, kinds: Sequence[QueueKind]) -> Overview:
    """`kinds`: the registered queue kinds (dashboard.kinds), each with its bank and queue."""
    server = _server(gateway, settings)
    banks = [(settings.queue(kind.key).bank or kind.default_bank, kind.holds) for kind in kinds]
    return Overview(
        server=server,
        banks=[
            _bank(gateway, bank_id, role)
            if server.healthy
            else BankSummary(bank_id=bank_id, role=role, error="server unreachable")
            for bank_id, role in banks
        ],
        queues=[_queue(kind, settings) for kind in kinds],
    )
