"""Opening the job store's SQLite database, read-write or read-only.

- :func:`why_read_only` says whether this process can write the store: the directory and the
  database files (``hud_gym.db`` and its ``-wal``/``-shm``) must be writable. A read-only file
  system or another user's files make the store read-only.
- :func:`connect_rw`: WAL, ``synchronous=NORMAL``, a 30 s busy timeout, foreign keys. Setting them
  up is retried while another process holds the store's lock (up to the busy timeout, then a
  :class:`StoreError`): SQLite skips the busy handler where waiting could deadlock, as two
  processes creating one store at once do.
- :func:`connect_ro`: SQLite's ``mode=ro``. A reader of a WAL database needs its ``-shm``/``-wal``
  files: when they exist (a writer has the database open, or died) ``mode=ro`` reads the committed
  rows in them; when they do not exist and cannot be created, no writer has the database open,
  so the database file alone is the whole store and it is opened ``immutable=1``. A missing (or
  empty) database reads as an empty store (an in-memory one with the schema).
- A file that is not an SQLite database, or a damaged one, is a :class:`StoreError` naming it.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

from hud_gym.jobs.errors import StoreError

__all__ = ["BUSY_TIMEOUT_S", "connect_ro", "connect_rw", "damaged", "missing", "why_read_only"]

BUSY_TIMEOUT_S = 30.0
_NOTADB, _CORRUPT, _BUSY, _LOCKED = 26, 11, 5, 6


def why_read_only(home: Path, db: Path) -> str | None:
    """``None`` when this process can write the store in ``home``, else why it cannot."""
    for path in (home, db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        if (path == home or path.exists()) and not os.access(path, os.W_OK):
            try:
                if os.statvfs(path).f_flag & os.ST_RDONLY:
                    return "a read-only file system"
            except OSError:
                pass
            return f"uid {os.getuid()} may not write {path}"
    return None


def damaged(exc: sqlite3.DatabaseError, db: Path) -> StoreError | None:
    """The :class:`StoreError` for "not a database" / "malformed" errors, else ``None``."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    if code == _NOTADB or "file is not a database" in str(exc):
        return StoreError(
            f"{db} is not a hud-gym job store (not an SQLite database): move it away, or point "
            "HUD_GYM_HOME at another directory"
        )
    if code == _CORRUPT or "malformed" in str(exc):
        return StoreError(
            f"the job store {db} is damaged ({exc}): restore it from a copy, or point HUD_GYM_HOME at another directory"
        )
    return None


def _locked(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` is SQLite's ``SQLITE_BUSY`` / ``SQLITE_LOCKED`` (another connection's lock)."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    return code in (_BUSY, _LOCKED) or "database is locked" in str(exc)


def _run_pragmas(conn: sqlite3.Connection, pragmas: tuple[str, ...]) -> None:
    """Run ``pragmas`` and read the schema, again and again while another connection's lock is in
    the way, for up to :data:`BUSY_TIMEOUT_S`.

    SQLite does not call the busy handler where waiting could deadlock: ``journal_mode=WAL`` on a
    fresh store raises "database is locked" at once when another process is creating the same
    store (it holds the lock this connection, already reading, would need next).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            for pragma in pragmas:
                conn.execute(f"PRAGMA {pragma}")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return
        except sqlite3.OperationalError as exc:
            if not _locked(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay + random.uniform(0, delay))
        delay = min(delay * 2, 0.25)


def _setup(conn: sqlite3.Connection, db: Path, *pragmas: str) -> sqlite3.Connection:
    conn.row_factory = sqlite3.Row
    try:
        _run_pragmas(conn, (f"busy_timeout={int(BUSY_TIMEOUT_S * 1000)}", *pragmas))
    except sqlite3.DatabaseError as exc:
        conn.close()
        if _locked(exc):
            raise StoreError(
                f"the job store {db} stayed locked by another process for {BUSY_TIMEOUT_S:g} s ({exc}); "
                "a process holding it may be stuck: retry, or point HUD_GYM_HOME at another directory"
            ) from exc
        error = damaged(exc, db)
        if error is None:
            raise
        raise error from exc
    return conn


def connect_rw(db: Path) -> sqlite3.Connection:
    """A read-write connection in autocommit mode (transactions are explicit).

    Raises:
        StoreError: the file is not an SQLite database, or is damaged.
    """
    conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    return _setup(conn, db, "journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON")


def connect_ro(db: Path) -> sqlite3.Connection:
    """A read-only connection (see the module docstring); ``:memory:`` when ``db`` does not exist.

    Raises:
        StoreError: not a database, damaged, or a write-ahead log that cannot be read here.
    """
    if missing(db):
        return _setup(sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False), db)
    uri = f"file:{quote(str(db))}?mode=ro"
    try:
        return _setup(_open(uri), db)
    except sqlite3.OperationalError as exc:
        wal = Path(f"{db}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreError(
                f"cannot read the job store {db} read-only ({exc}): its write-ahead log {wal} needs "
                f"{db}-shm next to it; open the store once where it is writable"
            ) from None
    return _setup(_open(uri + "&immutable=1"), db)


def missing(db: Path) -> bool:
    """Whether there is no database yet (no file, or an empty one): a read-only store is then empty."""
    try:
        return db.stat().st_size == 0
    except FileNotFoundError:
        return True


def _open(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
