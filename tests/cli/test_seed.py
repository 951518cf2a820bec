"""Seeding the demo data, against the real server."""

import uuid

from dashboard.cli.seed import finance_records, seed_demo_data, support_records
from dashboard.settings import Settings


def _counts(gateway, bank):
    stats = gateway.bank_stats(bank)
    return stats["total_nodes"], stats["total_documents"]


def test_seeding_twice_changes_nothing(hindsight):
    suffix = uuid.uuid4().hex[:8]
    settings = Settings(**{**hindsight.settings.model_dump(), "finance_bank": f"fin-{suffix}", "support_bank": f"sup-{suffix}"})
    first = seed_demo_data(hindsight.gateway, settings, log=lambda _: None)
    assert first[settings.finance_bank] == {"demo_records": len(finance_records()), "written": len(finance_records())}
    counts = {b: _counts(hindsight.gateway, b) for b in (settings.finance_bank, settings.support_bank)}
    assert counts[settings.finance_bank] == (len(finance_records()), len(finance_records()))
    assert counts[settings.support_bank] == (len(support_records()), len(support_records()))

    second = seed_demo_data(hindsight.gateway, settings, log=lambda _: None)
    assert all(v["written"] == 0 for v in second.values())
    assert {b: _counts(hindsight.gateway, b) for b in counts} == counts


def test_demo_data_has_the_shape_the_design_needs():
    from collections import Counter

    finance = finance_records()
    assert len(finance) >= 60
    vendors = {r.metadata["vendor_code"] for r in finance}
    assert len(vendors) >= 10
    price_variance = Counter(r.metadata["vendor_code"] for r in finance if r.metadata["exception_type"] == "price_variance")
    assert max(price_variance.values()) >= 10 and min(price_variance.values()) <= 2
    assert any("always reject" in r.content.lower() for r in finance if r.metadata["exception_type"] == "price_variance")
    assert len({r.metadata["exception_type"] for r in finance}) >= 5

    support = support_records()
    legacy = [r for r in support if not r.tags]
    assert legacy and any(r.tags for r in support)
    assert all(not r.metadata for r in legacy)  # legacy records carry ownership only in their text
