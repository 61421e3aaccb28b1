"""The listen address and its sockets: what the daemon listens on when it runs, and when it
does not, whether it could (the port free, or who holds it; a unix socket path usable)."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from pathlib import Path

from paseo.doctor.model import Check, DoctorContext
from paseo.rpc.address import Address, AddressError, parse_address

GROUP = "listen"


def configured_listen(context: DoctorContext) -> str:
    """The address start-up would listen on (``--listen`` aside): config and environment."""
    from paseo.config import load_config

    loaded = load_config(context.layout.config, context.env, home=context.home)
    return loaded.resolved.daemon.listen


def port_holder(port: int) -> str | None:
    """Who listens on TCP ``port`` on this machine: ``pid N (name)``, or ``None`` when it
    cannot be told (another user's process, without the privilege to see it)."""
    import psutil

    try:
        connections = psutil.net_connections(kind="inet")
    except (psutil.AccessDenied, OSError):
        return None
    for connection in connections:
        local = connection.laddr
        if connection.status == psutil.CONN_LISTEN and local and local.port == port:
            if connection.pid is None:
                return None
            try:
                name = psutil.Process(connection.pid).name()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                name = "?"
            return f"pid {connection.pid} ({name})"
    return None


def _try_bind(address: Address) -> OSError | None:
    host = address.host or "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As a listener does: a port in TIME_WAIT after a stop is still usable.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, address.port or 0))
        except OSError as exc:
            return exc
    return None


def _tcp_offline(listen: str, address: Address) -> Check:
    if not address.port:
        return Check(GROUP, "listen address", "ok", f"{listen}: the daemon takes a free port")
    error = _try_bind(address)
    if error is None:
        return Check(GROUP, "listen address", "ok", f"{listen} is free for the daemon")
    if error.errno == errno.EADDRINUSE:
        holder = port_holder(address.port or 0)
        who = holder or "another process (run as its owner or root to see which)"
        return Check(
            GROUP,
            "listen address",
            "fail",
            f"{listen} is held by {who}: the daemon cannot start on it",
            f"stop {holder or 'that process'}, or listen elsewhere: "
            "`paseo config set daemon.listen 127.0.0.1:PORT` (or `paseo daemon start "
            "--listen 127.0.0.1:PORT`)",
        )
    return Check(
        GROUP,
        "listen address",
        "fail",
        f"cannot listen on {listen}: {error.strerror or error}",
        "set `daemon.listen` to an address of this machine, e.g. "
        "`paseo config set daemon.listen 127.0.0.1:6767`",
    )


def _unix_offline(address: Address) -> Check:
    path = Path(address.path or "")
    if not path.parent.is_dir():
        return Check(
            GROUP,
            "listen address",
            "fail",
            f"the directory of the socket {path} does not exist",
            f"mkdir -p {path.parent}",
        )
    if not os.access(path.parent, os.W_OK):
        return Check(
            GROUP,
            "listen address",
            "fail",
            f"the socket directory {path.parent} is not writable by you",
            "choose another path for `daemon.listen`",
        )
    if path.exists() and not stat.S_ISSOCK(path.lstat().st_mode):
        return Check(
            GROUP,
            "listen address",
            "fail",
            f"{path} exists and is not a socket",
            f"move {path} away, or choose another path for `daemon.listen`",
        )
    return Check(GROUP, "listen address", "ok", f"unix socket {path} can be created")


def _unix_answers(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2.0)
        with contextlib.suppress(OSError):
            sock.connect(path)
            return True
    return False


def checks(context: DoctorContext) -> list[Check]:
    if context.running:
        listening = (context.status or {}).get("listen")
        if isinstance(listening, list) and listening:
            found = f"the daemon (pid {context.pid_info.get('pid')}) listens on " + ", ".join(
                str(item) for item in listening
            )
            return [Check(GROUP, "listen address", "ok", found)]
        where = context.rpc_listen or "an unknown address"
        if (context.rpc_listen or "").startswith("/") and _unix_answers(where):
            return [Check(GROUP, "listen address", "ok", f"the daemon listens on {where}")]
        return [
            Check(
                GROUP,
                "listen address",
                "fail",
                f"the daemon runs but does not answer on {where}: {context.daemon_note}",
                "`paseo daemon restart` (see `$PASEO_HOME/daemon.log` for why it stopped "
                "answering)",
            )
        ]
    listen = configured_listen(context)
    try:
        address = parse_address(listen)
    except AddressError as exc:
        return [
            Check(
                GROUP,
                "listen address",
                "fail",
                f"{listen!r} is not an address: {exc}",
                "`paseo config set daemon.listen 127.0.0.1:6767` (or unset PASEO_LISTEN)",
            )
        ]
    return [_unix_offline(address) if address.path is not None else _tcp_offline(listen, address)]
