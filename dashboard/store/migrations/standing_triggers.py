"""The triggers that keep `review_standing_decisions` (migration 0012), built for the columns of a revision.

A revision that changes the standing table's columns drops the triggers and creates them again from here with its
own column list (0015 did, when the kind-named columns became kind-neutral); the rules stay in one place:
- a row inserted, or whose state changes, that is not held becomes its case's standing decision unless a newer one
  already stands (decisions are append-only, so inserted rows are the newest; an approval confirmed late is not);
- a standing row deleted, or put on hold by hand, gives way to the case's newest remaining decision.
Only the changed rows are read (PostgreSQL: once per statement, from its transition tables), never the whole log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

TABLE = "review_standing_decisions"
HELD = "('awaiting_approval', 'returned', 'awaiting_second', 'awaiting_lead')"  # store.schema.HELD, as of 0012
CASE = ("bank_id", "case_kind", "case_id")
# The standing table's own counter (a row of review_log_versions), moved by its triggers whenever they change it; each
# row written carries the count it was written at, so a reader that kept the table reads only the rows changed since.
# The triggers hold the counter's row until they commit: counts commit in order.
COUNTER = f"(SELECT version FROM review_log_versions WHERE log = '{TABLE}')"
BUMP = f"UPDATE review_log_versions SET version = version + 1 WHERE log = '{TABLE}'"
POSTGRES_EVENTS = ("INSERT", "UPDATE", "DELETE")
SQLITE_TRIGGERS = ("inserted", "stands", "held", "deleted")


class StandingTriggers:
    """`columns`: the standing table's, in order; `values[dialect]`: a decisions row `r` as those columns."""

    def __init__(self, columns: Sequence[str], values: Mapping[str, str]):
        self.columns, self.values = tuple(columns), values
        self.names = ", ".join(self.columns)
        # Taking a case's place only from an older standing decision: a confirmation that lands after a newer
        # decision leaves the newer one standing.
        self.newer = (
            f" ON CONFLICT ({', '.join(CASE)}) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in self.columns[3:])
            + f" WHERE excluded.decision_id >= {TABLE}.decision_id"
        )

    def _newest_remaining(self, dialect: str, gone: str) -> str:
        """The newest decision not held of each case in `gone` (rows deleted or held), for cases left without one."""
        same_case = " AND ".join(f"d.{c} = g.{c}" for c in CASE)
        return (
            f"INSERT INTO {TABLE} ({self.names}) SELECT {self.values[dialect]} FROM review_decisions r WHERE r.id IN"
            f" (SELECT max(d.id) FROM review_decisions d JOIN {gone} g ON {same_case} WHERE d.state NOT IN {HELD}"
            f" GROUP BY d.bank_id, d.case_kind, d.case_id) ON CONFLICT DO NOTHING"
        )

    def fill(self, dialect: str) -> str:
        """Every case's standing decision, from the whole log (once, when the table's columns are made)."""
        return (
            f"INSERT INTO {TABLE} ({self.names}) SELECT {self.values[dialect]} FROM review_decisions r WHERE r.id IN"
            f" (SELECT max(id) FROM review_decisions WHERE state NOT IN {HELD} GROUP BY bank_id, case_kind, case_id)"
        )

    def _postgres(self) -> dict[str, tuple[str, list[str]]]:
        """event -> (transition tables, body); an update changes nothing (nor takes the counter) unless a state did."""
        stands = (
            f"INSERT INTO {TABLE} ({self.names}) SELECT DISTINCT ON (r.bank_id, r.case_kind, r.case_id)"
            f" {self.values['postgresql']} FROM {{rows}} r WHERE r.state NOT IN {HELD}"
            f" ORDER BY r.bank_id, r.case_kind, r.case_id, r.id DESC{self.newer}"
        )
        gives_way = f"DELETE FROM {TABLE} s USING {{rows}} g WHERE s.decision_id = g.id"
        state_changed = (
            "(SELECT n.* FROM changed n JOIN old_rows o ON o.id = n.id WHERE n.state IS DISTINCT FROM o.state)"
        )
        held_now = f"(SELECT * FROM {state_changed} c WHERE c.state IN {HELD})"
        return {
            "INSERT": ("NEW TABLE AS changed", [BUMP, stands.format(rows="changed")]),
            "UPDATE": (
                "OLD TABLE AS old_rows NEW TABLE AS changed",
                [
                    f"IF EXISTS {state_changed} THEN {BUMP}",
                    stands.format(rows=state_changed),
                    gives_way.format(rows=held_now),
                    self._newest_remaining("postgresql", held_now),
                    "END IF",
                ],
            ),
            "DELETE": (
                "OLD TABLE AS changed",
                [BUMP, gives_way.format(rows="changed"), self._newest_remaining("postgresql", "changed")],
            ),
        }

    def _sqlite(self) -> dict[str, tuple[str, str, list[str]]]:
        """trigger name suffix -> (event, when, body); row triggers, writers serialised by the database lock."""
        stands = f"INSERT INTO {TABLE} ({self.names}) SELECT {self.values['sqlite']} FROM review_decisions r WHERE r.id = NEW.id{self.newer}"

        def gives_way(row: str) -> list[str]:
            """`row` (NEW or OLD) no longer stands: its case's newest remaining decision does, if any."""
            case = "(SELECT " + ", ".join(f"{row}.{c} AS {c}" for c in CASE) + ")"
            return [BUMP, f"DELETE FROM {TABLE} WHERE decision_id = {row}.id", self._newest_remaining("sqlite", case)]

        return {
            "inserted": ("INSERT", f"NEW.state NOT IN {HELD}", [BUMP, stands]),
            "stands": ("UPDATE OF state", f"NEW.state IS NOT OLD.state AND NEW.state NOT IN {HELD}", [BUMP, stands]),
            "held": ("UPDATE OF state", f"NEW.state IS NOT OLD.state AND NEW.state IN {HELD}", gives_way("NEW")),
            "deleted": ("DELETE", "1", gives_way("OLD")),
        }

    def create(self, dialect: str) -> list[str]:
        if dialect == "postgresql":
            statements = []
            for event, (tables, body) in self._postgres().items():
                name = f"{TABLE}_{event.lower()}"
                statements.append(
                    f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {'; '.join(body)}; RETURN NULL; END $$"
                )
                statements.append(
                    f"CREATE TRIGGER {name} AFTER {event} ON review_decisions REFERENCING {tables}"
                    f" FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
                )
            return statements
        return [
            f"CREATE TRIGGER {TABLE}_{suffix} AFTER {event} ON review_decisions WHEN {when} BEGIN {'; '.join(body)}; END"
            for suffix, (event, when, body) in self._sqlite().items()
        ]


def drop_triggers(dialect: str) -> list[str]:
    if dialect == "postgresql":
        return [
            statement
            for event in POSTGRES_EVENTS
            for statement in (
                f"DROP TRIGGER {TABLE}_{event.lower()} ON review_decisions",
                f"DROP FUNCTION {TABLE}_{event.lower()}()",
            )
        ]
    return [f"DROP TRIGGER {TABLE}_{suffix}" for suffix in SQLITE_TRIGGERS]
