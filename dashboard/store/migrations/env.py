"""Alembic environment: migrations run on the engine `db.upgrade` passes in (never a URL from a file)."""

from alembic import context

from dashboard.store import agent_runs, schema  # noqa: F401  (register the tables on the metadata)
from dashboard.store.db import metadata

engine = context.config.attributes["engine"]
with engine.begin() as connection:
    context.configure(
        connection=connection, target_metadata=metadata, render_as_batch=connection.dialect.name == "sqlite"
    )
    context.run_migrations()
