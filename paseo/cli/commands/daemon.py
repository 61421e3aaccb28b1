"""``paseo daemon …``: start, stop, restart and inspect the daemon of a state root."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from paseo.cli.context import home_layout
from paseo.cli.errors import CliError
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    start = subs.add_parser("start", help="start the daemon (in the background by default)")
    start.add_argument("--foreground", action="store_true", help="stay attached to the terminal")
    start.add_argument("--listen", help="host:port, port or unix socket path to listen on")
    start.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds to wait for the daemon to become ready (default 30)",
    )
    start.set_defaults(run=run_start)

    stop = subs.add_parser("stop", help="stop the daemon")
    stop.add_argument(
        "--timeout",
        type=float,
        default=15.0,
        help="seconds to wait for a graceful exit (default 15)",
    )
    stop.add_argument(
        "--force",
        action="store_true",
        help="kill the daemon's process group if it does not exit in time",
    )
    stop.add_argument(
        "--kill-timeout", type=float, default=3.0, help="seconds to wait after the kill (default 3)"
    )
    stop.set_defaults(run=run_stop)

    restart = subs.add_parser("restart", help="stop, then start the daemon")
    restart.add_argument("--timeout", type=float, default=15.0)
    restart.add_argument("--force", action="store_true")
    restart.add_argument("--listen")
    restart.set_defaults(run=run_restart, kill_timeout=3.0, foreground=False)

    status = subs.add_parser("status", help="show whether the daemon runs, and where")
    status.set_defaults(run=run_status)


def run_start(args: argparse.Namespace) -> int:
    layout = home_layout(args)
    if args.listen:
        os.environ["PASEO_LISTEN"] = args.listen
    if args.foreground:
        from paseo.daemon import DaemonOptions, run_daemon

        return run_daemon(DaemonOptions(home=layout.root, foreground=True))
    from paseo.daemon.control import StartFailed, local_state, start_detached

    state = local_state(layout)
    if state.running:
        raise CliError(f"the daemon is already running (pid {state.pid}) on {layout.root}")
    try:
        report = start_detached(layout, extra_args=[], env=dict(os.environ), timeout=args.timeout)
    except StartFailed as exc:
        raise CliError(f"the daemon failed to start:\n{exc}") from exc
    if args.output != "table" or args.quiet:
        emit(args, report, id_key="pid")
    else:
        where = ", ".join(report.get("listen") or []) or "no transport"
        sys.stdout.write(f"paseo daemon started (pid {report['pid']}), listening on {where}\n")
    return 0


def _stop(args: argparse.Namespace) -> bool:
    """Stop the daemon; ``False`` when none was running."""
    from paseo.daemon.control import (
        clean_after_kill,
        local_state,
        signal_daemon,
        wait_for_exit,
    )

    layout = home_layout(args)
    state = local_state(layout)
    if not state.running or state.pid is None:
        return False
    signal_daemon(state.pid, signal.SIGTERM)
    if wait_for_exit(state.pid, args.timeout):
        return True
    if not args.force:
        raise CliError(
            f"the daemon (pid {state.pid}) did not exit within {args.timeout:.0f}s; "
            "retry with --force to kill it"
        )
    signal_daemon(state.pid, signal.SIGKILL, group=True)
    if not wait_for_exit(state.pid, args.kill_timeout):
        raise CliError(f"the daemon (pid {state.pid}) survived SIGKILL")
    clean_after_kill(layout)
    return True


def run_stop(args: argparse.Namespace) -> int:
    stopped = _stop(args)
    if not args.quiet and args.output == "table":
        sys.stdout.write("paseo daemon stopped\n" if stopped else "paseo daemon is not running\n")
    elif args.output != "table":
        emit(args, {"stopped": stopped})
    return 0


def run_restart(args: argparse.Namespace) -> int:
    _stop(args)
    args.foreground = False
    return run_start(args)


def run_status(args: argparse.Namespace) -> int:
    from paseo.daemon.control import local_state

    layout = home_layout(args)
    state = local_state(layout)
    data = {
        "running": state.running,
        "pid": state.pid,
        "home": str(layout.root),
        "startedAt": state.info.get("startedAt") if state.running else None,
        "version": state.info.get("version") if state.running else None,
        "listen": state.info.get("listen") if state.running else None,
    }
    emit(args, data, id_key="pid")
    return 0 if state.running else 3
