"""A webhook's signing key: a file only its owner may read, created so when it is absent."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


class SecretFileError(Exception):
    """The key file cannot be used; the message says which file and the fix."""


def load_or_create(path: Path) -> bytes:
    """The key in ``path`` (surrounding whitespace stripped); a new random one when absent."""
    try:
        # O_EXCL: never truncate a key another process just wrote; 0600 from creation.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as error:
        raise SecretFileError(f"cannot create {path}: {error.strerror}") from None
    else:
        fresh = secrets.token_hex(32)
        with os.fdopen(fd, "w") as handle:
            handle.write(fresh + "\n")
        return fresh.encode()
    try:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SecretFileError(
                f"{path} may be read by others (mode {stat.S_IMODE(mode):o}); run chmod 600 {path}"
            )
        key = path.read_bytes().strip()
    except OSError as error:
        raise SecretFileError(f"cannot read {path}: {error.strerror}") from None
    if not key:
        raise SecretFileError(f"{path} is empty; write a key into it or delete it")
    return key
