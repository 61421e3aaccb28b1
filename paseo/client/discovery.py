"""Finding the daemon and the token to present to it, the way the CLI does.

Order: ``--host`` (or ``PASEO_HOST``) alone when given; else the listen address the running
daemon recorded in ``$PASEO_HOME/paseo.pid``; else ``daemon.listen`` from config.json; else
``127.0.0.1:6767``. The token: the local credential (``$PASEO_HOME/local-credential``) for a
daemon on this machine, otherwise ``PASEO_PASSWORD``.

An address that came from the home (or the default) is used only while that home's daemon
runs (:meth:`DaemonTarget.refuse_elsewhere`): otherwise ``127.0.0.1:6767`` may be another
home's daemon, which refuses this home's credential, and the user is told about credentials
when the truth is that their daemon is not running (or their ``--home`` is not a directory).

Standard library only (the fast ``paseo daemon status`` path imports this).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from paseo.rpc.address import DEFAULT_HOST, DEFAULT_PORT, Address, AddressError, parse_address

if TYPE_CHECKING:
    from paseo.rpc.errors import DaemonNotRunning

START_HINT = "start it with `paseo daemon start`"


def __getattr__(name: str) -> Any:
    # Re-exported lazily: importing paseo_hookspecs (and pluggy with it) costs more than the
    # rest of this module.
    if name == "DaemonNotRunning":
        from paseo.rpc.errors import DaemonNotRunning

        return DaemonNotRunning
    raise AttributeError(name)


class DaemonTarget(NamedTuple):
    """Where to connect, why there, and with which token."""

    address: Address
    source: str
    """``--host``, ``PASEO_HOST``, ``paseo.pid``, ``config.json`` or ``default``."""
    home: Path
    token: str | None

    def not_running(self, detail: str = "") -> DaemonNotRunning:
        """The error to raise when nothing answers at :attr:`address`."""
        from paseo.rpc.errors import DaemonNotRunning

        where = f"at {self.address.listen_form()}"
        if self.source in ("--host", "PASEO_HOST"):
            return DaemonNotRunning(
                f"no Paseo daemon answers {where} ({self.source}){': ' + detail if detail else ''}"
            )
        return DaemonNotRunning(f"the Paseo daemon is not running (home {self.home}); {START_HINT}")

    def refuse_elsewhere(self) -> None:
        """Raise before connecting when the address was not given (``--host``/``PASEO_HOST``)
        and this home has no running daemon, or cannot be a home at all: whatever answers at
        the address then belongs to someone else."""
        from paseo.rpc.errors import DaemonNotRunning

        if self.source in ("--host", "PASEO_HOST"):
            return
        problem = unusable_home(self.home)
        if problem is None:
            try:
                running = daemon_running(self.home)
            except OSError as exc:
                problem = f"cannot read it: {exc.strerror or exc}"
        if problem is not None:
            raise DaemonNotRunning(
                f"{self.home} cannot be a Paseo home: {problem} (check --home / PASEO_HOME)"
            )
        if not running:
            raise self.not_running()


def unusable_home(home: Path) -> str | None:
    """Why ``home`` cannot be a Paseo home (it exists and is not a directory, or cannot be
    looked at); ``None`` when it can (a home that does not exist yet can)."""
    try:
        info = home.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISDIR(info.st_mode):
        return "not a directory"
    return None


def home_path(home: Path | str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """``home``, else ``$PASEO_HOME``, else ``~/.paseo`` (as :func:`paseo.home.resolve_home`,
    without importing the home package)."""
    environ = os.environ if env is None else env
    raw = os.fspath(home) if home else environ.get("PASEO_HOME") or "~/.paseo"
    return Path(os.path.abspath(os.path.expanduser(raw)))


def daemon_running(home: Path) -> bool:
    """Whether a live daemon holds the home lock (a read-only probe that creates nothing)."""
    try:
        fd = os.open(home / "paseo.pid.lock", os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def pid_info(home: Path) -> dict[str, Any]:
    """The pid marker's JSON object (``{}`` when missing or unreadable)."""
    try:
        info = json.loads((home / "paseo.pid").read_bytes())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def pid_listen(info: Mapping[str, Any]) -> str | None:
    """The JSON-RPC address recorded in a pid marker: ``rpcListen`` (``listen`` may name the
    TypeScript-protocol socket), else ``listen`` (markers written before ``rpcListen``)."""
    for key in ("rpcListen", "listen"):
        listen = info.get(key)
        if isinstance(listen, str) and listen:
            return listen
    return None


def _pid_listen(home: Path) -> str | None:
    return pid_listen(pid_info(home))


def _config_listen(home: Path) -> str | None:
    try:
        document = json.loads((home / "config.json").read_bytes())
    except (OSError, ValueError):
        return None
    daemon = document.get("daemon") if isinstance(document, dict) else None
    listen = daemon.get("listen") if isinstance(daemon, dict) else None
    return listen if isinstance(listen, str) and listen else None


def local_credential(home: Path) -> str | None:
    """The credential the running daemon of ``home`` accepts from local clients."""
    return _read_text(home / "local-credential")


def discover(
    host: str | None = None,
    *,
    home: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    token: str | None = None,
) -> DaemonTarget:
    """Resolve the daemon address and token (see the module docstring).

    Raises :class:`paseo.rpc.address.AddressError` for an address in none of the accepted
    forms. Does not connect.
    """
    environ = os.environ if env is None else env
    root = home_path(home, environ)
    candidates: list[tuple[str, str | None]] = [
        ("--host", host),
        ("PASEO_HOST", environ.get("PASEO_HOST")),
    ]
    address: Address | None = None
    source = "default"
    for name, value in candidates:
        if value:
            address, source = parse_address(value), name
            break
    if address is None:
        recorded = (("paseo.pid", _pid_listen(root)), ("config.json", _config_listen(root)))
        for name, value in recorded:
            if not value:
                continue
            try:
                parsed = parse_address(value)
            except AddressError:
                continue
            if parsed.port == 0:  # "pick a free port" names no address to connect to
                continue
            address, source = parsed, name
            break
    if address is None:
        address = Address(host=DEFAULT_HOST, port=DEFAULT_PORT)
    if token is None:
        credential = local_credential(root) if address.is_loopback else None
        token = credential or environ.get("PASEO_PASSWORD") or None
    return DaemonTarget(address=address, source=source, home=root, token=token)
