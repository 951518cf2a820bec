"""The review store's schema: Alembic brings a store to head, and the migrations match the tables the code queries."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from dashboard.store import agent_runs, schema  # noqa: F401  (register the tables)
from dashboard.store.db import alembic_config, make_engine, metadata, upgrade


def test_upgrade_creates_the_store_with_wal_and_foreign_keys_and_is_idempotent(tmp_path):
    engine = make_engine(None, tmp_path)
    upgrade(engine)
    upgrade(engine)  # every process calls it at start
    assert (tmp_path / "review.sqlite3").is_file()
    assert {"review_decisions", "review_claims", "review_comments", "review_case_flags"} <= set(
        sa.inspect(engine).get_table_names()
    )
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert (
            conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
            == ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
        )
        # The migration and schema.py describe the same tables.
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    engine.dispose()


def test_the_approvals_migration_upgrades_and_downgrades_on_both_engines(review_engine):
    from alembic import command

    upgrade(review_engine)
    config = alembic_config(review_engine)
    with review_engine.connect() as conn:
        assert "review_approvals" in sa.inspect(conn).get_table_names()
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    command.downgrade(config, "0003_generations")
    with review_engine.connect() as conn:
        assert "review_approvals" not in sa.inspect(conn).get_table_names()
    command.upgrade(config, "head")
    with review_engine.connect() as conn:
        assert {c["name"] for c in sa.inspect(conn).get_columns("review_approvals")} >= {
            "decision_id",
            "step",
            "actor",
            "amount",
            "limit",
        }
