"""The store's SQLite schema, versioned with ``PRAGMA user_version`` and migrated in order.

``MIGRATIONS[i]`` takes a database from version ``i`` to ``i + 1``. A new column or table is a new
migration appended here; released migrations are never edited. Opening a database migrates it to
:data:`SCHEMA_VERSION` in one ``BEGIN IMMEDIATE`` transaction, so concurrent openers never apply
a migration twice.

Version 1: ``jobs``, ``trajectories`` (one row per episode; ``status`` is ``running`` until the
episode ends, then a :data:`hud_gym.trajectory.Status`) and ``steps`` (one row per ``env.step``).
Version 2: who writes a row (host, pid, process start time) so a dead writer's rows can be marked
``interrupted``; the job's error message; indexes for listing.
Version 3: ``steps.reward`` may be NULL: a failed step (``env_error``, ``timeout``,
``eval_error``) has no reward, and the failed steps of older versions, stored as 0, become NULL.

Times are ISO 8601 UTC strings; JSON columns hold JSON text; image columns hold paths relative to
the store's ``images`` directory.
"""

from __future__ import annotations

import sqlite3

from hud_gym.jobs.errors import StoreError, StoreReadOnlyError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SchemaVersionError", "check_readable", "migrate", "schema_version"]

V1 = """
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    ended_at TEXT
);
CREATE TABLE trajectories (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    group_id TEXT,
    rollout_index INTEGER NOT NULL DEFAULT 0,
    task_id TEXT,
    task TEXT,
    seed INTEGER,
    prompt TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    reward REAL,
    error TEXT,
    final_response TEXT,
    grade TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    initial_observation_ref TEXT
);
CREATE INDEX trajectories_job ON trajectories(job_id, started_at);
CREATE TABLE steps (
    trajectory_id TEXT NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    actions TEXT NOT NULL DEFAULT '[]',
    reward REAL NOT NULL DEFAULT 0,
    terminated INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'ok',
    error TEXT,
    info TEXT NOT NULL DEFAULT '{}',
    timings TEXT NOT NULL DEFAULT '{}',
    started_at TEXT NOT NULL,
    ended_at TEXT,
    observation_ref TEXT,
    policy_trace TEXT,
    PRIMARY KEY (trajectory_id, idx)
);
"""

V2 = """
ALTER TABLE jobs ADD COLUMN error TEXT;
ALTER TABLE jobs ADD COLUMN owner_host TEXT;
ALTER TABLE jobs ADD COLUMN owner_pid INTEGER;
ALTER TABLE jobs ADD COLUMN owner_started REAL;
ALTER TABLE trajectories ADD COLUMN writer_host TEXT;
ALTER TABLE trajectories ADD COLUMN writer_pid INTEGER;
ALTER TABLE trajectories ADD COLUMN writer_started REAL;
CREATE INDEX jobs_created ON jobs(created_at);
CREATE INDEX trajectories_group ON trajectories(group_id);
CREATE INDEX trajectories_running ON trajectories(status) WHERE status = 'running';
"""

V3 = """
CREATE TABLE steps_v3 (
    trajectory_id TEXT NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    actions TEXT NOT NULL DEFAULT '[]',
    reward REAL,
    terminated INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'ok',
    error TEXT,
    info TEXT NOT NULL DEFAULT '{}',
    timings TEXT NOT NULL DEFAULT '{}',
    started_at TEXT NOT NULL,
    ended_at TEXT,
    observation_ref TEXT,
    policy_trace TEXT,
    PRIMARY KEY (trajectory_id, idx)
);
INSERT INTO steps_v3 (trajectory_id, idx, actions, reward, terminated, truncated, text, status, error, info, timings,
                      started_at, ended_at, observation_ref, policy_trace)
    SELECT trajectory_id, idx, actions, CASE WHEN status IN ('env_error', 'timeout') THEN NULL ELSE reward END,
           terminated, truncated, text, status, error, info, timings, started_at, ended_at, observation_ref,
           policy_trace
    FROM steps;
DROP TABLE steps;
ALTER TABLE steps_v3 RENAME TO steps
"""

MIGRATIONS: tuple[str, ...] = (V1, V2, V3)
"""The DDL of each version, in order (``MIGRATIONS[0]`` creates version 1)."""

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaVersionError(StoreError):
    """The database was written by a newer hud-gym than this one."""


def _too_new(found: int, path: str) -> SchemaVersionError:
    return SchemaVersionError(
        f"the job store {path or ''} has schema version {found}, but this hud-gym only knows versions up to "
        f"{SCHEMA_VERSION}: upgrade hud-gym, or point HUD_GYM_HOME at another directory".replace("  ", " ")
    )


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's ``PRAGMA user_version``."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def migrate(conn: sqlite3.Connection, path: str = "") -> int:
    """Bring the database up to :data:`SCHEMA_VERSION`; returns the version it was at.

    ``conn`` must be in autocommit mode (``isolation_level=None``).

    Raises:
        SchemaVersionError: the database is newer than this code.
    """
    if schema_version(conn) == SCHEMA_VERSION:
        return SCHEMA_VERSION
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = schema_version(conn)
        if found > SCHEMA_VERSION:
            raise _too_new(found, path)
        for version in range(found, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[version]):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return found


def check_readable(conn: sqlite3.Connection, path: str, read_only_reason: str) -> None:
    """Check that a store opened read-only has this code's schema (it cannot be migrated).

    Raises:
        SchemaVersionError: the database is newer than this code.
        StoreReadOnlyError: it is older and needs a migration, which a read-only store cannot run.
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise _too_new(found, path)
    if found < SCHEMA_VERSION:
        raise StoreReadOnlyError(
            f"the job store {path} has schema version {found} and must be upgraded to "
            f"{SCHEMA_VERSION}, but it is read-only ({read_only_reason}): open it once with "
            "write access"
        )
