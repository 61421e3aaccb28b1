"""The state root's permissions: secrets readable by their owner only, and owned by the user
running Paseo.

A secret another local user can read lets them act as this daemon (``daemon-keypair.json``: the
relay identity; ``local-credential``: full control of the daemon) or as its agents
(``agent-env/*``: provider keys). Paseo creates them 0600; a copy, a restore from a backup or a
``chmod`` by hand is how they end up wider, so the doctor looks at every one.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path

from paseo.doctor.model import Check, DoctorContext

GROUP = "home"

_SECRET_WORDS = ("key", "token", "secret", "credential", "password", "keypair", ".pem")
"""Under ``plugin-data/``, a file whose name contains one of these holds a secret (what the
built-in plugins keep there: ``mcp/token.key``, the Hub's credentials)."""


def _plugin_secrets(root: Path) -> Iterator[Path]:
    base = root / "plugin-data"
    if not base.is_dir():
        return
    for directory, _dirs, files in os.walk(base):
        for name in files:
            if any(word in name.lower() for word in _SECRET_WORDS):
                yield Path(directory) / name


def _config_has_secrets(config: Path) -> bool:
    """Whether ``config.json`` holds a credential (the same test the readers hide them with)."""
    from paseo.config import ConfigError, read_document
    from paseo.config.secrets import public_view

    try:
        document, _ = read_document(config)
    except ConfigError:  # an unreadable file is the config group's finding, not this one's
        return False
    return bool(document) and public_view(document) != document


def secret_files(root: Path) -> list[Path]:
    """Every file of ``root`` that must be 0600 and the user's, that exists."""
    candidates = [root / "daemon-keypair.json", root / "local-credential"]
    agent_env = root / "agent-env"
    if agent_env.is_dir():
        candidates += sorted(path for path in agent_env.rglob("*") if path.is_file())
    candidates += sorted(_plugin_secrets(root))
    config = root / "config.json"
    if config.is_file() and _config_has_secrets(config):
        candidates.append(config)
    return [path for path in candidates if path.is_file() and not path.is_symlink()]


def _check_secret(path: Path, uid: int) -> Check:
    info = path.lstat()
    mode = stat.S_IMODE(info.st_mode)
    quoted = shlex.quote(str(path))
    if info.st_uid != uid:
        return Check(
            GROUP,
            path.name,
            "fail",
            f"{path} is owned by uid {info.st_uid}, not by you (uid {uid})",
            f"chown {uid} {quoted} && chmod 600 {quoted}",
        )
    if mode & 0o077:
        return Check(
            GROUP,
            path.name,
            "fail",
            f"{path} has mode {mode:04o}: other users can read a secret",
            f"chmod 600 {quoted}",
        )
    return Check(GROUP, path.name, "ok", f"{path}: mode {mode:04o}, yours")


def checks(context: DoctorContext) -> list[Check]:
    root = context.home
    if not root.exists():
        return [
            Check(
                GROUP,
                "state root",
                "ok",
                f"{root} does not exist yet: the daemon creates it (0700) on its first start",
            )
        ]
    if not root.is_dir():
        return [
            Check(
                GROUP,
                "state root",
                "fail",
                f"{root} is not a directory",
                "move it away, or point PASEO_HOME / --home at a directory",
            )
        ]
    uid = os.getuid()
    info = root.stat()
    mode = stat.S_IMODE(info.st_mode)
    quoted = shlex.quote(str(root))
    results: list[Check]
    if info.st_uid != uid:
        results = [
            Check(
                GROUP,
                "state root",
                "fail",
                f"{root} is owned by uid {info.st_uid}, not by you (uid {uid})",
                f"chown -R {uid} {quoted}",
            )
        ]
    elif mode & 0o022:
        results = [
            Check(
                GROUP,
                "state root",
                "fail",
                f"{root} has mode {mode:04o}: other users can replace its files",
                f"chmod 700 {quoted}",
            )
        ]
    elif mode & 0o077:
        results = [
            Check(
                GROUP,
                "state root",
                "warn",
                f"{root} has mode {mode:04o}: other users can list it",
                f"chmod 700 {quoted}",
            )
        ]
    else:
        results = [Check(GROUP, "state root", "ok", f"{root}: mode {mode:04o}, yours")]
    secrets = secret_files(root)
    results += [_check_secret(path, uid) for path in secrets]
    if not secrets:
        results.append(
            Check(GROUP, "secrets", "ok", "no secret files yet (the daemon makes them, 0600)")
        )
    return results
