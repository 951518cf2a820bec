"""Deterministic synthetic AP data for the benchmark: precedents (skewed across vendors, types and
outcomes) and open exception queues. Same size -> same records, same document ids, every run.

Seeding is resumable: the bank's stored document ids are listed and only the missing ones are sent,
and nothing is sent when the bank already holds the expected count.
"""

from __future__ import annotations

import csv
import random
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

from dashboard.finance.models import EXCEPTION_TYPES, ExceptionCase, Precedent
from dashboard.hindsight.wire import MemoryRecord
from dashboard.store.decision import OUTCOMES

VENDORS = 60
SEED = 7
SEED_BATCH = 100
_ITEMS = [
    "steel brackets",
    "hex bolts",
    "copper wire",
    "pallets",
    "safety gloves",
    "hydraulic hoses",
    "LED panels",
    "toner cartridges",
    "conveyor belts",
    "welding rods",
    "packing foam",
    "bearings",
]
_SUMMARY = {
    "price_variance": "Billed {item} at {a:.2f} per unit against a PO price of {b:.2f}.",
    "quantity_mismatch": "Invoiced {n} units of {item}, goods receipt shows {m}.",
    "missing_receipt": "No goods receipt for {item} on the PO at invoice time.",
    "duplicate_invoice": "Invoice for {item} matches an earlier one in amount and date.",
    "tax_mismatch": "Tax on {item} charged at {a:.1f}% where {b:.1f}% applies.",
}
_RATIONALE = {
    "approve": "Within the agreed tolerance; supporting documents on file.",
    "reject": "Outside the contract terms; vendor asked to reissue.",
    "escalate": "Unclear contract position; referred to the buyer.",
}


def bench_bank(size: int, prefix: str = "bench-finance") -> str:
    return f"{prefix}-{size}"


def vendor_code(i: int) -> str:
    return f"BV{i:03d}"


def _vendor_weights() -> list[float]:
    return [1.0 / (i + 1) ** 1.1 for i in range(VENDORS)]  # Zipf-like: a few vendors dominate


def precedents(size: int) -> list[Precedent]:
    """`size` past decisions; vendor, type and outcome skewed, deterministic."""
    rng = random.Random(SEED)
    vendors = list(range(VENDORS))
    type_weights = [5, 3, 2, 1, 1]
    out = []
    start = date(2023, 1, 1)
    for n in range(size):
        v = rng.choices(vendors, _vendor_weights())[0]
        etype = rng.choices(EXCEPTION_TYPES, type_weights)[0]
        # each (vendor, type) leans to one outcome
        lean = OUTCOMES[(v + EXCEPTION_TYPES.index(etype)) % 3]
        outcome = lean if rng.random() < 0.75 else rng.choice(OUTCOMES)
        item = rng.choice(_ITEMS)
        a, b = rng.uniform(1, 50), rng.uniform(1, 50)
        summary = _SUMMARY[etype].format(item=item, a=a, b=b, n=rng.randint(10, 500), m=rng.randint(10, 500))
        out.append(
            Precedent(
                id=f"BENCH-{n:05d}",
                vendor_code=vendor_code(v),
                vendor_name=f"Bench Vendor {v:03d}",
                exception_type=etype,
                outcome=outcome,
                decided_on=start + timedelta(days=rng.randint(0, 900)),
                invoice=f"INV-B{n:05d}",
                summary=summary,
                rationale=_RATIONALE[outcome],
            )
        )
    return out


def records(size: int) -> list[MemoryRecord]:
    return [p.to_record() for p in precedents(size)]


def cases(count: int, seed: int = SEED + 1) -> list[ExceptionCase]:
    """`count` open exceptions over the same vendors and types (deterministic)."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        v = rng.choices(range(VENDORS), _vendor_weights())[0]
        etype = rng.choice(EXCEPTION_TYPES)
        po = round(rng.uniform(100, 20000), 2)
        inv = round(po * rng.uniform(0.9, 1.15), 2)
        item = rng.choice(_ITEMS)
        out.append(
            ExceptionCase(
                id=f"BE-{n:05d}",
                vendor_code=vendor_code(v),
                vendor_name=f"Bench Vendor {v:03d}",
                exception_type=etype,
                invoice=f"INV-Q{n:05d}",
                po=f"PO-Q{n:05d}",
                invoice_amount=inv,
                po_amount=po,
                description=f"{item} invoiced at {inv:.2f} against PO {po:.2f}.",
                opened_on=date(2026, 1, 1) + timedelta(days=rng.randint(0, 300)),
            )
        )
    return out


def write_cases_csv(path: Path, items: list[ExceptionCase]) -> Path:
    fields = list(ExceptionCase.model_fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for c in items:
            writer.writerow(c.model_dump(mode="json"))
    return path


def stored_ids(gateway, bank_id: str, page: int = 1000) -> set[str]:
    ids: set[str] = set()
    offset = 0
    while True:
        answer = gateway.list_memories(bank_id, limit=page, offset=offset)
        ids.update(i["document_id"] for i in answer.get("items", []) if i.get("document_id"))
        offset += page
        if offset >= answer.get("total", 0):
            return ids


def memory_count(gateway, bank_id: str) -> int:
    return int(gateway.list_memories(bank_id, limit=1).get("total", 0))


def seed(gateway, size: int, bank_id: str | None = None, log: Callable[[str], None] = print) -> dict:
    """Make the bench bank hold exactly the `size` synthetic records (resumable)."""
    bank_id = bank_id or bench_bank(size)
    gateway.ensure_bank(bank_id)
    wanted = records(size)
    if memory_count(gateway, bank_id) == size:
        log(f"{bank_id}: already holds {size} memories, not seeding")
        return {"bank": bank_id, "size": size, "written": 0, "seconds": 0.0}
    have = stored_ids(gateway, bank_id)
    missing = [r for r in wanted if r.document_id not in have]
    log(f"{bank_id}: {len(have)} present, {len(missing)} to write")
    started = time.perf_counter()
    for i in range(0, len(missing), SEED_BATCH):
        gateway.retain(bank_id, missing[i : i + SEED_BATCH])
        done = min(i + SEED_BATCH, len(missing))
        elapsed = time.perf_counter() - started
        log(f"{bank_id}: {done}/{len(missing)} written ({done / elapsed:.0f} items/s)")
    return {"bank": bank_id, "size": size, "written": len(missing), "seconds": round(time.perf_counter() - started, 1)}
