"""Bringing the daemon up and down, in the order the state-root rules demand.

1. Take the home lock before anything durable is touched (a second daemon stops here, having
   written nothing).
2. Load and validate ``config.json``; an invalid file stops the daemon and is never rewritten.
3. Replace a stale ``paseo.pid`` (refusing a live daemon that holds no OS lock), start logging,
   write the meta files, rotate the local credential.
4. Load plugins, open the store, start services; wait for SIGINT/SIGTERM.
5. Shut down in reverse; delete the local credential and the pid marker; release the lock.

SIGINT and SIGTERM are caught from before the credential is written until the lock is released
(:class:`_DeferredStop`): a signal in the first moments (imports, start-up, which a loaded
machine stretches to seconds) ends the daemon through its shutdown, not through the default
action, which left ``local-credential`` and ``paseo.pid`` behind.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from paseo import __version__
from paseo.daemon.options import READY_PREFIX, DaemonOptions, StartupError
from paseo.home import HomeBusy, HomeLayout, HomeLock

log = logging.getLogger("paseo.daemon")


def _install_event_loop_policy() -> None:
    try:
        import uvloop
    except ImportError:  # plain asyncio where uvloop is unavailable
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def run_daemon(options: DaemonOptions, *, stderr: TextIO | None = None) -> int:
    """Run the daemon in this process until SIGINT/SIGTERM; returns the exit code.

    Every failure ends in one ``paseo: error:`` line on ``stderr`` saying what to do; the
    traceback of an unexpected one goes to the daemon log when logging has started.
    """
    err = stderr or sys.stderr
    # A full disk makes log writes fail too: logging must not print its own tracebacks.
    logging.raiseExceptions = False
    try:
        return _run(options, err)
    except Exception as exc:  # noqa: BLE001 - the last line of defence; the detail is in the log
        _log_to_file(exc)
        err.write(f"paseo: error: {describe_failure(exc, options.home)}\n")
        return 1


def _log_to_file(exc: Exception) -> None:
    """The traceback of ``exc`` in the log file only: a foreground console shows no traceback."""
    record = log.makeRecord(
        log.name,
        logging.ERROR,
        __file__,
        0,
        "the daemon stopped on an unexpected error",
        (),
        (type(exc), exc, exc.__traceback__),
    )
    for handler in logging.getLogger("paseo").handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)


def describe_failure(exc: BaseException, home: Path) -> str:
    """One line saying why the daemon could not run on ``home`` and what to do about it."""
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        reason = exc.strerror or str(exc)
        advice = _ADVICE.get(exc.errno or 0, "fix it, or choose another home with --home")
        return f"cannot use the Paseo home {home}: {reason}{where}; {advice}"
    return f"the daemon stopped on an unexpected {type(exc).__name__}: {exc}"


_ADVICE = {
    errno.ENOSPC: "free some disk space, then start again",
    errno.EDQUOT: "free some space within your quota, then start again",
    errno.EROFS: "the file system is read-only; choose a writable home with --home",
    errno.EACCES: "check its permissions, or choose another home with --home",
    errno.EPERM: "check its permissions, or choose another home with --home",
    errno.ENOTDIR: "a part of that path is a file; choose another home with --home",
    errno.ENOENT: "the home cannot be created there; choose another home with --home",
}


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _DeferredStop:
    """SIGINT/SIGTERM noted, not acted on, while the event loop does not handle them.

    Installed before anything is written and kept until the lock is released; the loop's own
    handlers replace it while it runs (``_serve``), and it is put back once the loop closed
    (closing restores the default actions).
    """

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def install(self) -> None:
        # Signal handlers can only be set from the main thread (the CLI and the forked
        # daemon both run here there); elsewhere the default actions stay.
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in _STOP_SIGNALS:
            previous = signal.signal(sig, self._note)
            self._previous.setdefault(sig, previous)

    def restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()


def _run(options: DaemonOptions, err: TextIO) -> int:
    # Start-up creates a few hundred classes and many long-lived objects and frees almost
    # nothing: cyclic collection only costs time until the daemon is ready (see _serve).
    gc.disable()
    deferred = _DeferredStop()
    try:
        layout = HomeLayout(options.home)
        layout.create_root()
        lock = HomeLock(layout.lock, layout.pid)
        try:
            lock.acquire()
        except HomeBusy as exc:
            err.write(f"paseo: error: {exc}\n")
            return 1
        # Before any thread exists: see paseo.daemon.arenas (worker threads' reads of large
        # pages otherwise stay in the daemon's RSS, an arena per thread).
        from paseo.daemon.arenas import limit_to_one

        limit_to_one()
        deferred.install()
        prepared = False
        try:
            from paseo.daemon.runtime import Daemon

            try:
                daemon = Daemon.prepare(layout, options)
                prepared = True
                _install_event_loop_policy()
                return asyncio.run(_serve(daemon, deferred))
            except StartupError as exc:
                err.write(f"paseo: error: {exc}\n")
                return 1
        finally:
            deferred.install()
            if prepared:
                # Whatever ended the run (a shutdown step that raised, an error it did not
                # survive), no credential or marker outlives the daemon that wrote them.
                _remove_meta(layout)
            lock.release()
    finally:
        deferred.restore()
        gc.enable()


def _remove_meta(layout: HomeLayout) -> None:
    from paseo.home import meta

    for remove in (meta.delete_local_credential, meta.remove_pid_file):
        try:
            remove(layout)
        except OSError as exc:
            log.warning("could not remove a file of this daemon: %s", exc)


def _report_ready(daemon: object) -> None:
    """Tell whoever started us that we accept connections."""
    import json

    from paseo.daemon.runtime import Daemon

    assert isinstance(daemon, Daemon)
    report = {
        "pid": os.getpid(),
        "home": str(daemon.home),
        "listen": daemon.listen_addresses,
        "version": __version__,
    }
    if daemon.options.env.get("PASEO_DETACHED") == "1":
        sys.stderr.write(READY_PREFIX + json.dumps(report) + "\n")
        sys.stderr.flush()
        # Detach from the starter's pipe: later output would hit a closed reader.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
    else:
        where = ", ".join(daemon.listen_addresses) or "no transport"
        sys.stdout.write(
            f"paseo daemon {__version__} running (pid {os.getpid()}), "
            f"home {daemon.home}, listening on {where}\n"
        )
        sys.stdout.flush()


async def _serve(daemon: object, deferred: _DeferredStop) -> int:
    from paseo.daemon.runtime import Daemon

    assert isinstance(daemon, Daemon)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in _STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    try:
        if deferred.requested:
            # Asked to stop before the loop could hear it: nothing to start.
            log.info("shutdown requested during start-up")
            return 0
        from paseo.daemon.wiring import compose

        await daemon.start(compose)
        daemon.stop_requested = stop
        _report_ready(daemon)
        # What start-up built lives as long as the daemon: keep it out of every later
        # collection, then collect normally.
        gc.freeze()
        gc.enable()
        await stop.wait()
        log.info("shutdown requested")
    finally:
        await daemon.shutdown()
    return 0
