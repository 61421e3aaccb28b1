"""The daemon's meta files: ``server-id``, ``daemon-keypair.json``, ``local-credential`` and
``paseo.pid``.

Secret files are created 0600 by the atomic writer itself, never chmod-ed afterwards.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paseo.fs import atomic_write_json, atomic_write_text, read_json, sweep_temp_files
from paseo.home.lock import read_pid_file
from paseo.home.paths import HomeLayout
from paseo.home.quarantine import quarantine_file

log = logging.getLogger("paseo.home")


def b64url(data: bytes) -> str:
    """Unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def utc_now() -> str:
    """ISO 8601 UTC with milliseconds, as the TypeScript Paseo writes timestamps."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def sweep_leftovers(layout: HomeLayout) -> int:
    """Remove what killed atomic writes of the kernel's own home files left (called under the
    home lock, before any of them is written): ``config.json``, the meta files above (the
    credential's holds a secret) and the project icons. The home root is shared with the
    store and plugins, so only these targets' temporary files go there."""
    root_files = (layout.config, layout.server_id, layout.keypair, layout.pid)
    targets = {path.name for path in (*root_files, layout.local_credential)}
    return sweep_temp_files(layout.root, targets) + sweep_temp_files(layout.project_icons)


def load_or_create_server_id(layout: HomeLayout, env: dict[str, str] | None = None) -> str:
    """The stable ``srv_<base64url>`` id of this home; ``PASEO_SERVER_ID`` overrides it."""
    environ = os.environ if env is None else env
    override = environ.get("PASEO_SERVER_ID", "").strip()
    if override:
        return override
    try:
        raw = layout.server_id.read_bytes()
    except FileNotFoundError:
        raw = b""
    try:
        existing = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        existing = "\ufffd"  # not text: malformed, handled below
    if existing.startswith("srv_") and len(existing) > 4 and existing.isprintable():
        return existing
    if raw:
        # Kept, not overwritten: the id names this daemon to paired clients and a Hub.
        quarantine_file(layout.root, layout.server_id, "server-id is malformed; a new one was made")
    server_id = "srv_" + b64url(secrets.token_bytes(16))
    atomic_write_text(layout.server_id, server_id + "\n")
    return server_id


@dataclass(frozen=True)
class Keypair:
    """A libsodium box (Curve25519) keypair."""

    public_key: bytes
    secret_key: bytes

    @property
    def public_key_b64(self) -> str:
        return base64.b64encode(self.public_key).decode("ascii")


def _parse_keypair(data: Any) -> Keypair | None:
    if not isinstance(data, dict) or data.get("v") != 2:
        return None
    try:
        public = base64.b64decode(str(data["publicKeyB64"]), validate=True)
        secret = base64.b64decode(str(data["secretKeyB64"]), validate=True)
    except (KeyError, ValueError):
        return None
    if len(public) != 32 or len(secret) != 32:
        return None
    return Keypair(public, secret)


def load_or_create_keypair(layout: HomeLayout) -> Keypair:
    """Read ``daemon-keypair.json``, or create it (0600); an unreadable one is regenerated with
    a warning (the relay pairing must then be redone)."""
    from nacl.public import PrivateKey

    path = layout.keypair
    try:
        keypair = _parse_keypair(read_json(path))
    except FileNotFoundError:
        keypair = None
    except (OSError, ValueError):
        keypair = None
        quarantine_file(layout.root, path, "unreadable; a new keypair was generated")
    else:
        if keypair is None:
            quarantine_file(layout.root, path, "not a v2 keypair; a new keypair was generated")
    if keypair is not None:
        return keypair
    private = PrivateKey.generate()
    keypair = Keypair(bytes(private.public_key), bytes(private))
    atomic_write_json(
        path,
        {
            "v": 2,
            "publicKeyB64": keypair.public_key_b64,
            "secretKeyB64": base64.b64encode(keypair.secret_key).decode("ascii"),
        },
        mode=0o600,
    )
    return keypair


def rotate_local_credential(layout: HomeLayout) -> str:
    """Write a fresh 32-byte base64url credential (0600) and return it."""
    credential = b64url(secrets.token_bytes(32))
    atomic_write_text(layout.local_credential, credential, mode=0o600)
    return credential


def read_local_credential(layout: HomeLayout) -> str | None:
    """The current local credential, or ``None`` when no daemon has written one."""
    try:
        return layout.local_credential.read_text(encoding="ascii").strip() or None
    except (FileNotFoundError, PermissionError):
        return None


def delete_local_credential(layout: HomeLayout) -> None:
    with contextlib.suppress(FileNotFoundError):
        layout.local_credential.unlink()


def pid_info(*, home: Path, version: str, listen: str | None = None) -> dict[str, Any]:
    """The ``paseo.pid`` payload for this process."""
    return {
        "pid": os.getpid(),
        "startedAt": utc_now(),
        "hostname": socket.gethostname(),
        # The TypeScript CLI's `daemon status` names the owner as `<uid>@<hostname>`.
        "uid": os.getuid(),
        "version": version,
        "home": str(home),
        "listen": listen,
        # Marks a marker written by a daemon that holds the OS lock: once we hold the lock, such
        # a marker is stale by construction.
        "ownership": "flock",
    }


def write_pid_file(layout: HomeLayout, info: dict[str, Any]) -> None:
    atomic_write_json(layout.pid, info)


def remove_pid_file(layout: HomeLayout) -> None:
    with contextlib.suppress(FileNotFoundError):
        layout.pid.unlink()


def live_legacy_owner(layout: HomeLayout) -> dict[str, Any] | None:
    """A live daemon recorded in ``paseo.pid`` that holds no OS lock (the TypeScript Paseo uses
    the pid file alone), or ``None`` when the marker is absent or stale.

    Called with the lock held. A pid that is dead, is us, or was reused by an unrelated
    process (its command line does not mention paseo) is stale metadata.
    """
    import psutil

    info = read_pid_file(layout.pid)
    if not info or info.get("ownership") == "flock":
        return None
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return None
    try:
        cmdline = " ".join(psutil.Process(pid).cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    return info if "paseo" in cmdline.lower() else None
