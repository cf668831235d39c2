"""The job store's database plumbing: where it lives, whether this process may write it, one
SQLite connection per thread and process, and transactions.

- Every write is its own ``BEGIN IMMEDIATE`` transaction, committed before the call returns; with
  WAL and ``synchronous=NORMAL`` a committed row survives the writing process being killed
  (SIGKILL); only an OS crash or power loss may lose the last commits. A failed ``COMMIT`` (a full
  disk) is rolled back, so the connection stays usable.
- Writers in one process take turns on a lock, writers in different processes wait on SQLite's
  ``busy_timeout`` (30 s), so nobody sees "database is locked".
- A store this process cannot write (a read-only directory or file system, another user's files)
  opens read-only (:mod:`hud_gym.jobs.connection`): reads work, a write raises
  :class:`~hud_gym.jobs.errors.StoreReadOnlyError` naming the directory and why. The running
  rows of dead writers, which a read-only store cannot mark, read back ``interrupted`` all the
  same (temporary views over the tables, as :meth:`Store.reconcile` would write them).
- A full disk: a *status* write (how something ended) runs again in the space of the released
  ballast file, and after a full-disk error the other writes wait for room
  (:mod:`hud_gym.jobs.reserve`).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from hud_gym.jobs.connection import connect_ro, connect_rw, missing, why_read_only
from hud_gym.jobs.errors import StoreError, StoreReadOnlyError
from hud_gym.jobs.liveness import is_running
from hud_gym.jobs.reserve import SpaceReserve, is_disk_full
from hud_gym.jobs.schema import check_readable, migrate

__all__ = ["DB_NAME", "Database"]

DB_NAME = "hud_gym.db"
_T = TypeVar("_T")


class Database:
    """The database of the store in ``home`` (an existing or creatable directory).

    Args:
        home: the store directory.
        read_only: ``None``: read-write when this process can write the store, else read-only;
            ``True``: read-only; ``False``: read-write or :class:`StoreReadOnlyError`.

    Raises:
        StoreError: ``home`` is not a directory, the database is not a job store (or is damaged),
            or was written by a newer hud-gym (:class:`~hud_gym.jobs.schema.SchemaVersionError`).
    """

    def __init__(self, home: Path, *, read_only: bool | None = None) -> None:
        self.home = home
        self.db_path = self.home / DB_NAME
        self.images_dir = self.home / "images"
        self.read_only_reason: str | None = "it was opened read-only" if read_only else self._writable()
        if self.read_only_reason is not None and read_only is False:
            raise StoreReadOnlyError(self._read_only_message())
        self._local = threading.local()
        # Every thread's connection, so that release() can close them all (a long-lived pool thread
        # would otherwise keep a store it touched open for the life of the process). A connection is
        # used only by its own thread; it may be closed from another (check_same_thread=False).
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._generation = 0
        self._lock_pid = os.getpid()
        self._write_lock = threading.Lock()
        self.reserve = SpaceReserve(self.home)
        """The ballast file kept for status writes on a full disk (:mod:`hud_gym.jobs.reserve`)."""
        if self.read_only_reason is None:
            migrate(self.conn(), str(self.db_path))
            self.reserve.ensure()
        else:
            check_readable(self.conn(), str(self.db_path), self.read_only_reason)

    @property
    def read_only(self) -> bool:
        """Whether this store only reads (see :attr:`read_only_reason`)."""
        return self.read_only_reason is not None

    def _writable(self) -> str | None:
        """Create the directories; ``None`` when the store is writable, else why not."""
        try:
            self.images_dir.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            pass  # reported below
        except OSError as exc:
            if exc.errno == errno.EROFS:
                return "a read-only file system"
            return f"cannot create {exc.filename or self.images_dir}: {exc.strerror or exc}"
        for directory in (self.home, self.images_dir):
            if not directory.is_dir():
                raise StoreError(f"the job store {directory} is not a directory (HUD_GYM_HOME must name a directory)")
        return why_read_only(self.home, self.db_path)

    def _read_only_message(self) -> str:
        return (
            f"the job store {self.home} is read-only ({self.read_only_reason}): hud-gym cannot record jobs there; "
            "point HUD_GYM_HOME at a writable directory"
        )

    def require_writable(self) -> None:
        """Raise :class:`StoreReadOnlyError` (naming the directory and why) unless writable."""
        if self.read_only_reason is not None:
            raise StoreReadOnlyError(self._read_only_message())

    # ------------------------------------------------------------------ connections

    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use, again after a fork or :meth:`release`)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid() and self._local.generation == self._generation:
            return conn
        if self.read_only_reason is None:
            conn = connect_rw(self.db_path)
        else:
            conn = connect_ro(self.db_path)
            if missing(self.db_path):  # an empty store: an in-memory database with the schema
                migrate(conn)
            else:
                _show_dead_writers_interrupted(conn)
                conn.execute("PRAGMA query_only=1")
        self._local.conn, self._local.pid, self._local.generation = conn, os.getpid(), self._generation
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def _lock(self) -> threading.Lock:
        if self._lock_pid != os.getpid():  # a forked child must not inherit a held lock
            self._write_lock, self._lock_pid = threading.Lock(), os.getpid()
        return self._write_lock

    @contextmanager
    def write(self, *, status: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction. After a full disk, only ``status`` writes (how something ended) run
        until there is room again (:meth:`SpaceReserve.check`)."""
        self.require_writable()
        if not status:
            self.reserve.check()
        conn = self.conn()
        with self._lock():
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:  # a failed COMMIT (a full disk) leaves the transaction open
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if is_disk_full(exc):
                    self.reserve.note_full()
                raise

    def status_write(self, write: Callable[[sqlite3.Connection], _T]) -> _T:
        """A write that tells how something ended: on a full disk it runs again in the space of the
        released ballast file."""
        try:
            with self.write(status=True) as conn:
                return write(conn)
        except Exception as exc:
            if not is_disk_full(exc) or not self.reserve.release():
                raise
        with self.write(status=True) as conn:
            return write(conn)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot across several queries."""
        conn = self.conn()
        conn.execute("BEGIN")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends, or at :meth:`release`)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._connections_lock:
                self._connections = [c for c in self._connections if c is not conn]

    def release(self) -> None:
        """Close every thread's connection, when no thread is using the store; a thread that uses
        it again opens a new one."""
        with self._connections_lock:
            connections, self._connections = self._connections, []
            self._generation += 1
        for conn in connections:
            try:
                conn.close()
            except sqlite3.Error:
                pass


_DEAD_RUN_ERROR = "the process running this episode died before it ended"
_DEAD_JOB_ERROR = "the process running this job died before it finished"


def _show_dead_writers_interrupted(conn: sqlite3.Connection) -> None:
    """Shadow ``trajectories`` and ``jobs`` with temporary views in which the running rows of
    writers that no longer run are ``interrupted`` (reward ``None``), as reconciling would make them."""
    conn.create_function("hud_gym_alive", 3, lambda host, pid, started: int(is_running(host, pid, started)))
    for table, prefix, error, end in (
        (
            "trajectories",
            "writer",
            _DEAD_RUN_ERROR,
            "COALESCE((SELECT MAX(COALESCE(s.ended_at, s.started_at)) FROM main.steps s WHERE s.trajectory_id = t.id), "
            "t.started_at)",
        ),
        (
            "jobs",
            "owner",
            _DEAD_JOB_ERROR,
            "COALESCE((SELECT MAX(COALESCE(r.ended_at, r.started_at)) FROM main.trajectories r WHERE r.job_id = t.id), "
            "t.created_at)",
        ),
    ):
        dead = f"t.status = 'running' AND NOT hud_gym_alive(t.{prefix}_host, t.{prefix}_pid, t.{prefix}_started)"
        replaced = {
            "status": f"CASE WHEN {dead} THEN 'interrupted' ELSE t.status END",
            "error": f"CASE WHEN {dead} THEN '{error}' ELSE t.error END",
            "ended_at": f"CASE WHEN {dead} THEN {end} ELSE t.ended_at END",
            "reward": f"CASE WHEN {dead} THEN NULL ELSE t.reward END",
        }
        columns = [row[1] for row in conn.execute(f"PRAGMA main.table_info({table})")]
        select = ", ".join(f"{replaced.get(c, f't.{c}')} AS {c}" for c in columns)
        conn.execute(f"CREATE TEMP VIEW {table} AS SELECT {select}, t.rowid AS rowid FROM main.{table} t")
