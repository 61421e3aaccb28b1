"""``paseo daemon …``: start, stop, restart, inspect and reload the daemon of a state root.

``status`` is kept fast: it reads the pid marker and asks the daemon for ``GET /api/status``
over a plain socket, never importing asyncio, websockets or pydantic. ``stop`` asks the daemon
to shut down over RPC first, then sends SIGTERM, then (with ``--force``) kills its process
group, each step bounded by a timeout.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo.cli.errors import CliError
from paseo.cli.output import emit

if TYPE_CHECKING:
    from paseo.home import HomeLayout


def home_layout(args: argparse.Namespace) -> HomeLayout:
    # Imported on use: the home package costs more than the whole status command may.
    from paseo.cli.context import home_layout as layout_of

    return layout_of(args)


EXIT_NOT_RUNNING = 3
"""``paseo daemon status`` exit code when no daemon runs (as ``systemctl status`` does)."""


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    configure_start(
        subs.add_parser("start", help="start the daemon (in the background by default)")
    )

    stop = subs.add_parser("stop", help="stop the daemon")
    _stop_options(stop)
    stop.set_defaults(run=run_stop)

    configure_restart(subs.add_parser("restart", help="stop, then start the daemon"))
    configure_status(subs.add_parser("status", help="show whether the daemon runs, where, and how"))

    reload = subs.add_parser("reload", help="re-read config.json in the running daemon")
    reload.add_argument("--host", help="daemon address (default: this home's)")
    reload.set_defaults(run=run_reload)

    password = subs.add_parser(
        "set-password", help="require a password from remote clients (bcrypt hash in config.json)"
    )
    password.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input instead of prompting",
    )
    password.add_argument("--clear", action="store_true", help="remove the password")
    password.set_defaults(run=run_set_password)

    from paseo.cli.commands import apptoken

    apptoken.configure(subs)


def configure_start(parser: argparse.ArgumentParser) -> None:
    """``daemon start``, also the top-level ``paseo start``."""
    parser.add_argument("--foreground", action="store_true", help="stay attached to the terminal")
    parser.add_argument(
        "--listen",
        help="host:port, a port, unix:///path or an absolute socket path (port 0: any free "
        "port); default daemon.listen, else 127.0.0.1:6767",
    )
    parser.add_argument(
        "--disable-plugin",
        action="append",
        default=[],
        metavar="ID",
        help="do not load plugin ID this run, built-ins too (repeatable; PASEO_DISABLE_PLUGINS)",
    )
    parser.add_argument(
        "--no-mcp",
        action="store_true",
        help="same as --disable-plugin mcp: no MCP server for agents (docs/mcp.md)",
    )
    parser.add_argument(
        "--no-relay",
        action="store_true",
        help="do not connect to the relay this run, whatever daemon.relay.enabled says "
        "(PASEO_RELAY_ENABLED=false; docs/relay.md)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds to wait for the daemon to become ready (default 30)",
    )
    parser.set_defaults(run=run_start)


def configure_restart(parser: argparse.ArgumentParser) -> None:
    """``daemon restart``, also the top-level ``paseo restart``."""
    _stop_options(parser)
    parser.add_argument("--listen", help="as for start")
    parser.add_argument(
        "--disable-plugin", action="append", default=[], metavar="ID", help="as for start"
    )
    parser.add_argument("--no-mcp", action="store_true", help="as for start")
    parser.add_argument("--no-relay", action="store_true", help="as for start")
    parser.set_defaults(run=run_restart, foreground=False)


def configure_status(parser: argparse.ArgumentParser) -> None:
    """``daemon status``, also the top-level ``paseo status``."""
    parser.add_argument("--host", help="ask the daemon at this address (default: this home's)")
    parser.set_defaults(run=run_status)


def _stop_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=float,
        default=15.0,
        help="seconds to wait for a graceful exit (default 15)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="kill the daemon's process group if it does not exit in time",
    )
    parser.add_argument(
        "--kill-timeout", type=float, default=3.0, help="seconds to wait after the kill (default 3)"
    )


# ----------------------------------------------------------------------------- start


def run_start(args: argparse.Namespace) -> int:
    layout = home_layout(args)
    if args.listen:
        from paseo.rpc.address import AddressError, parse_address

        try:
            parse_address(args.listen)
        except AddressError as exc:
            raise CliError(f"--listen: {exc}", exit_code=2) from None
        os.environ["PASEO_LISTEN"] = args.listen
    if getattr(args, "no_relay", False):
        os.environ["PASEO_RELAY_ENABLED"] = "false"
    disabled = [*getattr(args, "disable_plugin", []), *(["mcp"] if args.no_mcp else [])]
    if disabled:
        earlier = os.environ.get("PASEO_DISABLE_PLUGINS", "")
        os.environ["PASEO_DISABLE_PLUGINS"] = ",".join(p for p in [earlier, *disabled] if p)
    if args.foreground:
        from paseo.daemon import DaemonOptions, run_daemon

        return run_daemon(DaemonOptions(home=layout.root, foreground=True))
    from paseo.cli import exit_without_teardown
    from paseo.daemon.control import StartFailed, local_state, start_detached

    try:
        state = local_state(layout)
    except OSError as exc:  # a home that cannot exist (under a file, under /proc)
        from paseo.daemon.bootstrap import describe_failure

        raise CliError(describe_failure(exc, layout.root)) from None
    if state.running:
        raise CliError(f"the daemon is already running (pid {state.pid}) on {layout.root}")
    try:
        report = start_detached(layout, env=dict(os.environ), timeout=args.timeout)
    except StartFailed as exc:
        raise CliError(f"the daemon failed to start:\n{exc}") from exc
    if args.output != "table" or args.quiet:
        emit(args, report, id_key="pid")
    else:
        where = ", ".join(report.get("listen") or []) or "no transport"
        sys.stdout.write(f"paseo daemon started (pid {report['pid']}), listening on {where}\n")
    _warn_quarantine(layout.root)
    # The daemon is a fork of this process and carries on; nothing is left to do here, and
    # tearing down this interpreter's modules would only keep the caller waiting.
    exit_without_teardown()
    return 0


# ------------------------------------------------------------------------------ stop


def _request_shutdown(listen: str, home: str, timeout: float) -> bool:
    """Ask the daemon at ``listen`` to stop over RPC; ``False`` when that did not work."""
    import asyncio

    from paseo_hookspecs.errors import PaseoError

    from paseo.client.client import PaseoClient

    async def ask() -> None:
        client = PaseoClient(
            listen,
            home=home,
            client_type="cli",
            reconnect=False,
            connect_timeout=timeout,
            request_timeout=timeout,
        )
        try:
            await client.connect()
            await client.shutdown("paseo daemon stop")
        finally:
            await client.close()

    try:
        asyncio.run(ask())
    except (PaseoError, OSError):
        return False
    return True


def _wait_gone(layout: HomeLayout, pid: int, timeout: float, *, lock: bool = True) -> bool:
    """Wait until the daemon released the home lock (``lock``) and its process ended.

    A process that has exited but not yet been reaped by its new parent (a zombie) counts as
    ended: it holds no resources and runs no code.
    """
    import psutil

    from paseo.client.discovery import daemon_running

    deadline = time.monotonic() + timeout
    while True:
        try:
            alive = psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            alive = False
        if not alive and not (lock and daemon_running(layout.root)):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _stop(args: argparse.Namespace) -> bool:
    """Stop the daemon; ``False`` when none was running."""
    from paseo.client.discovery import pid_listen
    from paseo.daemon.control import clean_after_kill, local_state, signal_daemon

    layout = home_layout(args)
    state = local_state(layout)
    if not state.running or state.pid is None:
        return False
    pid = state.pid
    listen = pid_listen(state.info)
    asked = isinstance(listen, str) and _request_shutdown(
        listen, str(layout.root), min(5.0, args.timeout)
    )
    if asked and _wait_gone(layout, pid, args.timeout):
        return True
    signal_daemon(pid, signal.SIGTERM)
    if _wait_gone(layout, pid, args.timeout):
        return True
    if not args.force:
        raise CliError(
            f"the daemon (pid {pid}) did not exit within {args.timeout:.0f}s; "
            "retry with --force to kill it"
        )
    signal_daemon(pid, signal.SIGKILL, group=True)
    if not _wait_gone(layout, pid, args.kill_timeout, lock=False):
        raise CliError(f"the daemon (pid {pid}) survived SIGKILL")
    clean_after_kill(layout)
    return True


def run_stop(args: argparse.Namespace) -> int:
    stopped = _stop(args)
    if not args.quiet and args.output == "table":
        sys.stdout.write("paseo daemon stopped\n" if stopped else "paseo daemon is not running\n")
    elif args.output != "table":
        emit(args, {"stopped": stopped})
    return 0


def _check_startable(args: argparse.Namespace) -> None:
    """Refuse before stopping anything when the daemon could not start again: config.json is
    checked the way start-up checks it, with this environment (restart passes it on)."""
    from paseo.config import ConfigError, load_for_startup

    layout = home_layout(args)
    env = dict(os.environ)
    if args.listen:
        env["PASEO_LISTEN"] = args.listen
    try:
        load_for_startup(layout.config, env=env, home=layout.root)
    except ConfigError as exc:
        raise CliError(
            f"not restarting: the daemon could not start with this configuration "
            f"(the running daemon keeps running):\n{exc}"
        ) from None


def run_restart(args: argparse.Namespace) -> int:
    if args.listen:
        from paseo.rpc.address import AddressError, parse_address

        try:
            parse_address(args.listen)
        except AddressError as exc:
            raise CliError(f"--listen: {exc}", exit_code=2) from None
    _check_startable(args)
    _stop(args)
    args.foreground = False
    args.timeout = max(args.timeout, 30.0)
    return run_start(args)


# ---------------------------------------------------------------------------- status

_TABLE_KEYS = (
    ("running", "running"),
    ("pid", "pid"),
    ("listen", "listen"),
    ("uptime", "uptime"),
    ("version", "version"),
    ("serverId", "server id"),
    ("home", "home"),
    ("storageDriver", "store"),
    ("pluginsLoaded", "plugins"),
    ("pluginsFailed", "failed plugins"),
    ("connections", "connections"),
    ("agents", "agents"),
    ("relay", "relay"),
    ("quarantined", "quarantined files"),
    ("note", "note"),
)


def _relay_line(relay: Any) -> str | None:
    """``connected to relay.example:443, 2 clients`` (the table's relay row)."""
    if not isinstance(relay, dict):
        return None
    state = str(relay.get("state") or "off")
    endpoint = relay.get("endpoint")
    line = f"{state} ({endpoint})" if endpoint and state != "off" else state
    clients = relay.get("clients")
    if state == "connected" and isinstance(clients, int):
        line += f", {clients} client{'' if clients == 1 else 's'}"
    if relay.get("lastError"):
        line += f"; last error: {relay['lastError']}"
    return line


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def _started_uptime(started_at: Any) -> float | None:
    """Seconds since an ISO ``startedAt`` (pid-file fallback when the daemon cannot answer)."""
    if not isinstance(started_at, str):
        return None
    import calendar

    try:
        parsed = time.strptime(started_at.split(".")[0].rstrip("Z"), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return max(0.0, time.time() - calendar.timegm(parsed))


def run_status(args: argparse.Namespace) -> int:
    from paseo.client.discovery import daemon_running, discover, home_path, pid_info, pid_listen
    from paseo.client.quick import get_json
    from paseo.rpc.address import AddressError

    home = home_path(getattr(args, "home", None))
    explicit = args.host or os.environ.get("PASEO_HOST")
    data: dict[str, Any] = {"running": False, "home": str(home)}
    if not explicit:
        if not daemon_running(home):
            return _emit_status(args, data, hint=True)
        info = pid_info(home)
        data.update(
            running=True,
            pid=info.get("pid"),
            listen=pid_listen(info),
            version=info.get("version"),
            startedAt=info.get("startedAt"),
        )
    try:
        target = discover(args.host, home=home)
    except AddressError as exc:
        raise CliError(f"--host: {exc}", exit_code=2) from None
    try:
        code, body = get_json(target.address, "/api/status", token=target.token, timeout=3.0)
    except OSError as exc:
        if explicit:
            raise CliError(
                target.not_running(str(exc)).message, exit_code=EXIT_NOT_RUNNING
            ) from None
        data["note"] = f"the daemon does not answer at {target.address}: {exc}"
        data["uptimeSeconds"] = _started_uptime(data.get("startedAt"))
        return _emit_status(args, data)
    if code != 200 or not isinstance(body, dict):
        reason = "the credentials were refused" if code in (401, 403) else f"HTTP {code}"
        if explicit:
            raise CliError(f"the daemon at {target.address} answered: {reason}")
        data["note"] = f"status unavailable: {reason}"
        data["uptimeSeconds"] = _started_uptime(data.get("startedAt"))
        return _emit_status(args, data)
    data.update(body)
    data["running"] = True
    return _emit_status(args, data)


def _warn_quarantine(home: Path) -> None:
    """Say so when files sit in quarantine: a record that failed to load is otherwise
    invisible (its agent or project is simply missing from every listing)."""
    from paseo.home.quarantine import list_quarantine

    entries = list_quarantine(home)
    if entries:
        names = ", ".join(sorted({entry.original.name for entry in entries})[:5])
        sys.stderr.write(
            f"paseo: warning: {len(entries)} file(s) could not be loaded and are in quarantine "
            f"({names}); see `paseo store quarantine ls`\n"
        )


def _quarantined_files(home: Path) -> int:
    """How many files sit in ``home``'s quarantine: a directory walk, because ``daemon status``
    is on the fast path and stays free of the home package's imports."""
    return sum(len(files) for _dir, _dirs, files in os.walk(home / "quarantine"))


def _section_rows(sections: Any) -> dict[str, str]:
    """A line per plugin section (the relay, notification sinks): its state and headline."""
    if not isinstance(sections, dict):
        return {}
    return {
        str(name): f"{body.get('state')}: {body.get('headline')}"
        for name, body in sorted(sections.items())
        if isinstance(body, dict)
    }


def _emit_status(args: argparse.Namespace, data: dict[str, Any], *, hint: bool = False) -> int:
    quarantined = _quarantined_files(Path(data["home"])) if data.get("home") else 0
    if quarantined:
        data = {**data, "quarantined": quarantined}
    if args.output != "table" or args.quiet:
        emit(args, data, id_key="pid")
    else:
        plugins = data.get("plugins") or {}
        counts = data.get("counts") or {}
        listen = data.get("listen")
        uptime = data.get("uptimeSeconds")
        row = {
            **data,
            "listen": ", ".join(listen) if isinstance(listen, list) else listen,
            "uptime": _uptime(uptime) if isinstance(uptime, (int, float)) else None,
            "pluginsLoaded": plugins.get("loaded"),
            "pluginsFailed": [f"{f['name']} ({f['error']})" for f in plugins["failed"]]
            if plugins.get("failed") is not None
            else None,
            "connections": counts.get("connections"),
            "relay": _relay_line(data.get("relay")),
            "agents": counts.get("agents"),
        }
        table = {
            label: row.get(key)
            for key, label in _TABLE_KEYS
            if key in row and (row.get(key) is not None or key == "running")
        }
        emit(args, {**table, **_section_rows(data.get("sections"))})
    if hint:
        sys.stderr.write("paseo: the daemon is not running; start it with `paseo daemon start`\n")
    return 0 if data.get("running") else EXIT_NOT_RUNNING


# ---------------------------------------------------------------------------- reload


def run_reload(args: argparse.Namespace) -> int:
    """Re-read config.json inside the daemon; report what applied and what needs a restart."""
    from paseo.client.sync import SyncClient

    with SyncClient(
        args.host, home=home_layout(args).root, client_type="cli", reconnect=False
    ) as client:
        outcome = client.config_reload()
    data = outcome.model_dump(mode="json")
    if args.output != "table" or args.quiet:
        emit(args, data)
        return 0
    if not outcome.changed:
        sys.stdout.write("config.json reloaded: nothing changed\n")
    for path in outcome.applied:
        sys.stdout.write(f"applied: {path}\n")
    for path in outcome.restartRequired:
        sys.stdout.write(f"restart required: {path} (run `paseo daemon restart`)\n")
    for warning in outcome.warnings:
        sys.stderr.write(f"paseo: warning: {warning}\n")
    return 0


# ---------------------------------------------------------------------- set-password


def _ask_password() -> str:
    """Read the new password twice from the terminal."""
    import getpass

    if not sys.stdin.isatty():
        raise CliError(
            "standard input is not a terminal: pipe the password with --password-stdin; "
            "nothing changed",
            exit_code=2,
        )
    try:
        password = getpass.getpass("New password: ")
        repeated = getpass.getpass("Repeat it: ")
    except EOFError:
        raise CliError("no password given (input ended); nothing changed") from None
    if repeated != password:
        raise CliError("the passwords differ; nothing changed")
    return password


def run_set_password(args: argparse.Namespace) -> int:
    """Write ``daemon.auth.password`` (a bcrypt hash) to config.json atomically."""
    from paseo.config import ConfigError, set_path
    from paseo.rpc.trust import hash_password

    layout = home_layout(args)
    if args.clear:
        value: str | None = None
    else:
        password = sys.stdin.readline().rstrip("\r\n") if args.password_stdin else _ask_password()
        if len(password) < 8:
            raise CliError("the password must have at least 8 characters; nothing changed")
        value = hash_password(password)
    layout.create_root()
    try:
        set_path(layout.config, "daemon.auth.password", value, literal=True)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    if not args.quiet:
        done = "removed" if value is None else "set"
        sys.stdout.write(
            f"password {done} in {layout.config}; a running daemon applies it on `paseo reload`\n"
        )
    return 0
