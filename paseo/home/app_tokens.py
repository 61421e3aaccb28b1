"""App tokens (``$PASEO_HOME/app-tokens.json``): credentials a browser, the app or a remote
client keeps across daemon restarts.

The local credential rotates at every start, so a client that connected with it is refused
after ``paseo daemon restart``; a password is shared by every client and cannot be withdrawn
from one of them. An app token is neither: created with ``paseo daemon token create`` (its
secret is shown once), listed and revoked one by one, and it grants what the password grants —
a ``remote`` session, never ``local`` authority, even from this machine.

The file holds only SHA-256 digests of the secrets (a token is 256 random bits, so a fast
digest is as strong as bcrypt here), is written atomically and 0600 from creation, and is
re-read by the daemon when it changes: a token created or revoked while the daemon runs counts
from the next connection on.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paseo.fs import atomic_write_json, read_json
from paseo.home.meta import utc_now

PREFIX = "paseo_app_"
"""Every secret starts with it, so a leaked one is recognisable (secret scanners, logs)."""
MAX_TOKENS = 256
MAX_NAME = 80


class AppTokenError(Exception):
    """A token that cannot be created, found or revoked; the message says why."""


@dataclass(frozen=True)
class AppToken:
    id: str
    name: str
    created_at: str
    digest: str

    def public(self) -> dict[str, Any]:
        """What ``token ls`` shows (never the digest)."""
        return {"id": self.id, "name": self.name, "createdAt": self.created_at}


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _parse(data: Any) -> list[AppToken]:
    tokens: list[AppToken] = []
    entries = data.get("tokens") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        fields = (entry.get("id"), entry.get("name"), entry.get("createdAt"), entry.get("sha256"))
        if all(isinstance(value, str) for value in fields):
            tokens.append(AppToken(*fields))  # type: ignore[arg-type]
    return tokens


class AppTokens:
    """The token file of one home (see the module docstring). Thread-safe; every change is
    written before it returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._digests: dict[str, AppToken] = {}

    def entries(self) -> list[AppToken]:
        try:
            return _parse(read_json(self.path))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise AppTokenError(f"cannot read {self.path}: {exc}") from None

    def _write(self, tokens: list[AppToken]) -> None:
        data = {
            "version": 1,
            "tokens": [
                {"id": t.id, "name": t.name, "createdAt": t.created_at, "sha256": t.digest}
                for t in tokens
            ],
        }
        try:
            atomic_write_json(self.path, data, mode=0o600)
        except OSError as exc:
            raise AppTokenError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def create(self, name: str) -> tuple[AppToken, str]:
        """A new token and its secret (the only time the secret exists outside the client)."""
        name = name.strip()
        if not name or len(name) > MAX_NAME or not name.isprintable():
            raise AppTokenError(f"a token name is 1 to {MAX_NAME} printable characters")
        with self._lock:
            tokens = self.entries()
            if len(tokens) >= MAX_TOKENS:
                raise AppTokenError(
                    f"{len(tokens)} tokens exist already (at most {MAX_TOKENS}): revoke some"
                )
            if any(t.name == name for t in tokens):
                raise AppTokenError(f"a token named {name!r} exists already")
            secret = PREFIX + secrets.token_urlsafe(32)
            token = AppToken(f"tok_{secrets.token_hex(4)}", name, utc_now(), _digest(secret))
            self._write([*tokens, token])
        return token, secret

    def revoke(self, which: str) -> AppToken:
        """Remove the token with id (or name) ``which``."""
        with self._lock:
            tokens = self.entries()
            found = [t for t in tokens if which in (t.id, t.name)]
            if not found:
                raise AppTokenError(f"no app token {which!r} (see `paseo daemon token ls`)")
            self._write([t for t in tokens if t is not found[0]])
        return found[0]

    def verify(self, secret: str) -> AppToken | None:
        """The token ``secret`` is the secret of, re-reading the file when it changed."""
        if not secret.startswith(PREFIX):
            return None
        with self._lock:
            self._refresh()
            digest = _digest(secret)
            for known, token in self._digests.items():
                if hmac.compare_digest(known, digest):
                    return token
        return None

    def _refresh(self) -> None:
        try:
            info = os.stat(self.path)
            stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp and stamp is not None:
            return
        try:
            tokens = self.entries() if stamp is not None else []
        except AppTokenError:
            tokens = []  # an unreadable file grants nothing
        self._digests = {t.digest: t for t in tokens}
        self._stamp = stamp
