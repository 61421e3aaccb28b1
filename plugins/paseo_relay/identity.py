"""The daemon's relay identity in its home, as the kernel and the TypeScript Paseo keep it:
``server-id`` (``srv_`` + base64url, one line) and ``daemon-keypair.json``
(``{"v":2,"publicKeyB64","secretKeyB64"}``, standard base64 of 32 bytes each, mode 0600).

``paseo daemon pair`` runs without the daemon, so it reads them here and creates what is
missing, in the same format as the daemon's start-up does; whichever writes first, the other
reads that file (a missing file is created with a hard link, which fails if another process got
there first, so two writers never end up with different keys). ``--rotate`` replaces the
keypair atomically (a rename): old offers stop working from the next handshake.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nacl.public import PrivateKey
from paseo_hookspecs.atomic import atomic_write_bytes, fsync_directory, temp_path_for

SERVER_ID_FILE = "server-id"
KEYPAIR_FILE = "daemon-keypair.json"


class IdentityError(Exception):
    """A file of the identity exists but cannot be used; the text says what to do."""


@dataclass(frozen=True)
class Keypair:
    public_key: bytes
    secret_key: bytes = field(repr=False)

    @property
    def public_key_b64(self) -> str:
        return base64.b64encode(self.public_key).decode("ascii")

    def document(self) -> dict[str, object]:
        return {
            "v": 2,
            "publicKeyB64": self.public_key_b64,
            "secretKeyB64": base64.b64encode(self.secret_key).decode("ascii"),
        }


def home_path(home: str | None, env: Mapping[str, str] | None = None) -> Path:
    """``--home``, else ``$PASEO_HOME``, else ``~/.paseo``."""
    environ = os.environ if env is None else env
    raw = home or environ.get("PASEO_HOME") or "~/.paseo"
    return Path(os.path.abspath(os.path.expanduser(raw)))


def _create_exclusive(target: Path, data: bytes, mode: int) -> bool:
    """Write ``target`` only if it does not exist (atomically, ``mode`` from creation);
    ``False`` when another process created it first."""
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = temp_path_for(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        fsync_directory(target.parent)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def load_or_create_server_id(home: Path, env: Mapping[str, str] | None = None) -> str:
    """The home's server id; ``PASEO_SERVER_ID`` overrides it (as the daemon does)."""
    environ = os.environ if env is None else env
    override = environ.get("PASEO_SERVER_ID", "").strip()
    if override:
        return override
    path = home / SERVER_ID_FILE
    for _ in range(2):
        try:
            existing = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            fresh = "srv_" + base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()
            if _create_exclusive(path, (fresh + "\n").encode(), 0o644):
                return fresh
            continue
        except (OSError, UnicodeDecodeError) as exc:
            raise IdentityError(f"{path} cannot be read ({exc}); start the daemon once") from None
        if existing.startswith("srv_") and len(existing) > 4 and existing.isprintable():
            return existing
        raise IdentityError(
            f"{path} is malformed; `paseo daemon start` sets it aside and makes a new one"
        )
    raise IdentityError(f"{path} keeps changing; try again")  # pragma: no cover


def _parse_keypair(raw: bytes) -> Keypair | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != 2:
        return None
    try:
        public = base64.b64decode(str(data["publicKeyB64"]), validate=True)
        secret = base64.b64decode(str(data["secretKeyB64"]), validate=True)
    except (KeyError, binascii.Error):
        return None
    if len(public) != 32 or len(secret) != 32:
        return None
    if bytes(PrivateKey(secret).public_key) != public:
        return None  # a pair that does not belong together would pair with nothing
    return Keypair(public, secret)


def _fresh_keypair() -> Keypair:
    private = PrivateKey.generate()
    return Keypair(bytes(private.public_key), bytes(private))


def _encode(keypair: Keypair) -> bytes:
    return (json.dumps(keypair.document(), indent=2) + "\n").encode("utf-8")


def load_or_create_keypair(home: Path) -> Keypair:
    """The home's keypair, created (0600) when missing."""
    path = home / KEYPAIR_FILE
    for _ in range(2):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            fresh = _fresh_keypair()
            if _create_exclusive(path, _encode(fresh), 0o600):
                return fresh
            continue
        except OSError as exc:
            raise IdentityError(f"{path} cannot be read ({exc.strerror or exc})") from None
        keypair = _parse_keypair(raw)
        if keypair is None:
            raise IdentityError(
                f"{path} is not a usable keypair; `paseo daemon pair --rotate` replaces it "
                "(paired clients must then pair again)"
            )
        return keypair
    raise IdentityError(f"{path} keeps changing; try again")  # pragma: no cover


def rotate_keypair(home: Path) -> Keypair:
    """Replace the keypair atomically (0600 from creation); offers made with the old one no
    longer complete a handshake."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    keypair = _fresh_keypair()
    atomic_write_bytes(home / KEYPAIR_FILE, _encode(keypair), mode=0o600)
    return keypair
