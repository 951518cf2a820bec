"""Seeding the demo data, against the real server."""

import json
import os
import subprocess
import sys
import uuid

from dashboard.cli.seed import finance_records, seed_demo_data, support_records
from dashboard.kinds import configured
from dashboard.settings import QueueSettings, Settings
from tests.kinds.disputes import DISPUTES

DISPUTES_LINE = "tests.kinds.disputes:DISPUTES"  # a kind registered by its one line, declaring a seed


def _counts(gateway, bank):
    stats = gateway.bank_stats(bank)
    return stats["total_nodes"], stats["total_documents"]


def test_seeding_twice_changes_nothing(hindsight):
    suffix = uuid.uuid4().hex[:8]
    settings = Settings(
        **{**hindsight.settings.model_dump(), "finance_bank": f"fin-{suffix}", "support_bank": f"sup-{suffix}"}
    )
    disputes = f"disp-{suffix}"
    settings = configured(
        settings.model_copy(
            update={"extra_kinds": [DISPUTES_LINE], "queues": {"disputes": QueueSettings(bank=disputes)}}
        )
    )
    first = seed_demo_data(hindsight.gateway, settings, log=lambda _: None)
    assert first[settings.finance_bank] == {"demo_records": len(finance_records()), "written": len(finance_records())}
    assert first[disputes] == {
        "demo_records": len(DISPUTES.seed),
        "written": len(DISPUTES.seed),
    }  # every kind with a seed
    assert _counts(hindsight.gateway, disputes)[1] == len(DISPUTES.seed)
    counts = {b: _counts(hindsight.gateway, b) for b in (settings.finance_bank, settings.support_bank)}
    assert counts[settings.finance_bank] == (len(finance_records()), len(finance_records()))
    assert counts[settings.support_bank] == (len(support_records()), len(support_records()))

    second = seed_demo_data(hindsight.gateway, settings, log=lambda _: None)
    assert all(v["written"] == 0 for v in second.values()) and disputes in second
    assert {b: _counts(hindsight.gateway, b) for b in counts} == counts

    # `server status` lists every registered kind's bank, and how the server stores it
    env = {
        **os.environ,
        **hindsight.env(finance=settings.finance_bank, support=settings.support_bank),
        "RECALL_REVIEW_KINDS": DISPUTES_LINE,
        "RECALL_REVIEW_QUEUES": json.dumps({"disputes": {"bank": disputes}}),
    }
    env.pop("HINDSIGHT_API_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "server", "status", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    memory = json.loads(done.stdout)["memory"]
    assert (
        list(memory) == [settings.finance_bank, settings.support_bank, disputes]
        and memory[disputes]["mode"] == "verbatim"
    )


def test_demo_data_has_the_shape_the_design_needs():
    from collections import Counter

    finance = finance_records()
    assert len(finance) >= 60
    vendors = {r.metadata["vendor_code"] for r in finance}
    assert len(vendors) >= 10
    price_variance = Counter(
        r.metadata["vendor_code"] for r in finance if r.metadata["exception_type"] == "price_variance"
    )
    assert max(price_variance.values()) >= 10 and min(price_variance.values()) <= 2
    assert any(
        "always reject" in r.content.lower() for r in finance if r.metadata["exception_type"] == "price_variance"
    )
    assert len({r.metadata["exception_type"] for r in finance}) >= 5

    support = support_records()
    legacy = [r for r in support if not r.tags]
    assert legacy and any(r.tags for r in support)
    assert all(not r.metadata for r in legacy)  # legacy records carry ownership only in their text
