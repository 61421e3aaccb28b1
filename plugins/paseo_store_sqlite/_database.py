"""Connection governance: one writer, a small read-only pool, every call off the event loop.

SQLite serializes writers, so exactly one connection writes; it lives on a dedicated thread (a
single-thread executor) and runs every mutation as one ``BEGIN IMMEDIATE`` transaction, so a
read-modify-write sees no interleaved writer and a failure rolls back to the previous state.
Independent reads go to a bounded pool of read-only connections (``mode=ro`` and ``query_only``)
on reader threads; in WAL mode each statement reads a consistent snapshot without blocking the
writer. Reads run in autocommit and fetch every row at once, so no read transaction outlives its
statement (a long-lived one would keep the WAL from being checkpointed).

Connection-scoped PRAGMAs are applied by :func:`configure_connection` to every connection as it
is created; running a PRAGMA once on "the database" would configure only one connection.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from paseo_hookspecs.errors import PaseoError, StorageError, Unavailable

from paseo_store_sqlite._migrations import MIGRATIONS, Migration, migrate

T = TypeVar("T")

READ_POOL_SIZE = 4
"""Upper bound of read-only connections (and reader threads)."""

BUSY_TIMEOUT_MS = 5000
"""How long a connection waits for another process's lock before failing with ``busy``."""


def configure_connection(conn: sqlite3.Connection, *, writer: bool) -> None:
    """Apply the connection-scoped PRAGMAs; called once for every connection at creation.

    ``synchronous=FULL`` fsyncs the WAL on every commit, so an acknowledged write survives
    SIGKILL and power loss (``NORMAL`` would only survive a process crash).
    """
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if writer:
        # Persistent in the database file; readers then find WAL already enabled.
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            msg = f"cannot enable WAL journaling (journal_mode is {mode!r})"
            raise StorageError(msg)
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    if not writer:
        conn.execute("PRAGMA query_only = 1")


def storage_error(exc: sqlite3.Error) -> StorageError:
    """A :class:`StorageError` describing an sqlite failure (disk full, I/O error, ...)."""
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    return StorageError(f"sqlite: {exc}", data={"sqlite": name})


def _close_all(connections: list[sqlite3.Connection]) -> None:
    for conn in connections:
        conn.close()


class CommitUncertain(StorageError):
    """A transaction could neither be confirmed committed nor rolled back."""


class Database:
    """The store's connections and the threads that use them."""

    def __init__(
        self,
        path: Path,
        *,
        migrations: tuple[Migration, ...] = MIGRATIONS,
        read_pool_size: int = READ_POOL_SIZE,
    ) -> None:
        self.path = path
        self._migrations = migrations
        self._read_pool_size = read_pool_size
        self._writer_executor: ThreadPoolExecutor | None = None
        self._reader_executor: ThreadPoolExecutor | None = None
        self._writer: sqlite3.Connection | None = None
        self._idle_readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()

    # --- lifecycle ------------------------------------------------------------------------------

    async def open(self) -> None:
        """Create the file if needed, open the writer and apply pending migrations."""
        if self._writer_executor is not None:
            return
        self._writer_executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="paseo-sqlite-writer"
        )
        self._reader_executor = ThreadPoolExecutor(
            max_workers=self._read_pool_size, thread_name_prefix="paseo-sqlite-reader"
        )
        try:
            await self._on_writer(self._open_writer)
        except BaseException:
            await self.close()
            raise

    def _open_writer(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Created private up front: SQLite gives its -wal and -shm files the same mode.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            configure_connection(conn, writer=True)
            migrate(conn, self._migrations)
        except BaseException:
            conn.close()
            raise
        self._writer = conn

    async def close(self) -> None:
        """Let queued work finish, then close every connection. Idempotent."""
        writer_executor, self._writer_executor = self._writer_executor, None
        reader_executor, self._reader_executor = self._reader_executor, None
        if reader_executor is not None:
            await asyncio.to_thread(reader_executor.shutdown, wait=True)
        with self._readers_lock:
            readers, self._readers = self._readers, []
        self._idle_readers = queue.SimpleQueue()
        if readers:
            await asyncio.to_thread(_close_all, readers)
        if writer_executor is not None:
            if self._writer is not None:
                # The writer connection belongs to its thread; close it there, after the work
                # already queued.
                writer_executor.submit(self._close_writer)
            await asyncio.to_thread(writer_executor.shutdown, wait=True)

    def _close_writer(self) -> None:
        conn, self._writer = self._writer, None
        if conn is not None:
            conn.close()

    # --- running work ---------------------------------------------------------------------------

    async def _on_writer(self, fn: Callable[[], T]) -> T:
        executor = self._writer_executor
        if executor is None:
            raise Unavailable("the sqlite store is not open")
        try:
            return await asyncio.get_running_loop().run_in_executor(executor, fn)
        except PaseoError:
            raise
        except sqlite3.Error as exc:
            raise storage_error(exc) from exc

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` as one ``BEGIN IMMEDIATE`` transaction on the writer thread.

        When ``fn`` raises, the transaction is rolled back and the error propagates (sqlite
        errors as :class:`StorageError`). If neither the commit nor the rollback can be
        confirmed, :class:`CommitUncertain` is raised.
        """
        return await self._on_writer(functools.partial(self._transact, fn))

    def _transact(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._writer
        if conn is None:
            raise Unavailable("the sqlite store is not open")
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error as rollback_error:
                    msg = f"sqlite: {exc}; rollback failed too: {rollback_error}"
                    raise CommitUncertain(msg) from exc
            raise
        return result

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on a pooled read-only connection, on a reader thread."""
        executor = self._reader_executor
        if executor is None:
            raise Unavailable("the sqlite store is not open")
        try:
            return await asyncio.get_running_loop().run_in_executor(
                executor, functools.partial(self._run_read, fn)
            )
        except PaseoError:
            raise
        except sqlite3.Error as exc:
            raise storage_error(exc) from exc

    def _run_read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            conn = self._idle_readers.get_nowait()
        except queue.Empty:
            conn = self._open_reader()
        try:
            return fn(conn)
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._idle_readers.put(conn)

    def _open_reader(self) -> sqlite3.Connection:
        # The pool never exceeds the reader thread count: a thread takes an idle connection or
        # opens one, and returns it before taking the next task.
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            configure_connection(conn, writer=False)
        except BaseException:
            conn.close()
            raise
        with self._readers_lock:
            self._readers.append(conn)
        return conn

    @property
    def reader_count(self) -> int:
        """How many read-only connections are open."""
        with self._readers_lock:
            return len(self._readers)

    async def inspect_writer(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the writer connection outside any transaction (diagnostics, tests)."""

        def run() -> T:
            if self._writer is None:
                raise Unavailable("the sqlite store is not open")
            return fn(self._writer)

        return await self._on_writer(run)

    async def inspect_readers(self, fn: Callable[[sqlite3.Connection], T]) -> list[T]:
        """Run ``fn`` on every open read-only connection (diagnostics and tests: only while no
        other read is running, since a connection serves one thread at a time)."""

        def run() -> list[T]:
            with self._readers_lock:
                readers = list(self._readers)
            return [fn(conn) for conn in readers]

        return await self.read(lambda _conn: run())
