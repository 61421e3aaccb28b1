"""The relationship record, ``$PASEO_HOME/hub-relationship.json`` (the reference layout).

States on disk: ``pending`` (persisted before the enroll POST, with the secret and the token),
``active`` (enrolled: the token is gone, ``transport`` names the socket), ``disconnecting``
(revocation requested, still holding the secret it authenticates with) and ``revoked`` (the
secret is gone; only id, origin, scopes and a sanitized reason remain). No file: not connected.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from paseo_hookspecs.errors import Unavailable
from pydantic import BaseModel, ConfigDict

from paseo_hub.text import printable

FILE_NAME = "hub-relationship.json"
KEYPAIR_FILE = "daemon-keypair.json"
"""The daemon's Curve25519 keypair, written by the daemon before any plugin starts."""
HUB_SCOPE = "hub.execution.*"
SOCKET_PATH = "/api/daemons/socket"

DiskState = Literal["pending", "active", "disconnecting", "revoked"]


class _Part(BaseModel):
    # Newer writers may add fields; keep them so a rewrite does not lose them.
    model_config = ConfigDict(extra="allow", defer_build=True)


class RelationshipInfo(_Part):
    daemonId: str
    idempotencyKey: str
    hubOrigin: str
    createdAt: str
    scopes: list[str]
    slug: str | None = None


class Credential(_Part):
    secret: str


class Enrollment(_Part):
    token: str


class Identity(_Part):
    serverId: str
    daemonPublicKey: str


class TransportInfo(_Part):
    kind: Literal["direct_websocket"] = "direct_websocket"
    webSocketUrl: str


class Revocation(_Part):
    reason: str
    revokedAt: str


class Relationship(_Part):
    version: int = 1
    state: DiskState
    relationship: RelationshipInfo
    identity: Identity | None = None
    credential: Credential | None = None
    enrollment: Enrollment | None = None
    transport: TransportInfo | None = None
    revocation: Revocation | None = None

    def document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    @property
    def secret(self) -> str:
        if self.credential is None:
            raise ValueError("the relationship holds no credential")
        return self.credential.secret


class InvalidHubUrl(ValueError):
    """The URL given to ``paseo hub connect`` is not an http(s) origin."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def normalize_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lowercased, default port dropped."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise InvalidHubUrl(f"{url!r} is not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise InvalidHubUrl(f"{url!r} is not an http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidHubUrl("the Hub URL must not carry credentials")
    if parts.query or parts.fragment:
        raise InvalidHubUrl("the Hub URL must not have a query or fragment")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def credential_verifier(secret: str) -> str:
    """``base64url_nopad(SHA-256(utf8(secret)))``: all the Hub stores of the secret."""
    digest = hashlib.sha256(secret.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _public_key_of(document: Any) -> str | None:
    key = document.get("publicKeyB64") if isinstance(document, dict) else None
    if not isinstance(key, str) or len(base64.b64decode(key, validate=True)) != 32:
        return None
    return key


def read_public_key(home: Path) -> str:
    """The daemon's public key as a Hub is sent it at enrollment: ``publicKeyB64`` of
    ``$PASEO_HOME/daemon-keypair.json`` (the format the TypeScript Paseo shares, ``v: 2``).
    Only that field is read; the secret key beside it never leaves the file. Blocking."""
    path = home / KEYPAIR_FILE
    try:
        key = _public_key_of(json.loads(path.read_bytes()))
        problem = "it holds no 32-byte public key"
    except (OSError, ValueError) as exc:  # binascii.Error is a ValueError
        key, problem = None, str(exc)
    if key is None:
        raise Unavailable(
            f"the daemon's keypair ({path}) is unreadable ({problem}); "
            "restart the daemon to regenerate it, then connect again"
        )
    return key


def new_pending(origin: str, token: str, server_id: str, public_key: str) -> Relationship:
    """A fresh relationship to persist before enrolling: v4 id, idempotency key, secret."""
    return Relationship(
        state="pending",
        relationship=RelationshipInfo(
            daemonId=str(uuid.uuid4()),
            idempotencyKey=str(uuid.uuid4()),
            hubOrigin=origin,
            createdAt=now_iso(),
            scopes=[HUB_SCOPE],
        ),
        identity=Identity(serverId=server_id, daemonPublicKey=public_key),
        credential=Credential(secret=secrets.token_urlsafe(32)),
        enrollment=Enrollment(token=token),
    )


def check_socket_url(url: Any, origin: str) -> str:
    """The enroll answer's ``webSocketUrl`` when it is safe to dial, else ``ValueError``: it
    must be ws/wss matching the Hub's http/https, on the Hub's host and port, unfragmented."""
    if not isinstance(url, str) or not url:
        raise ValueError("webSocketUrl is missing")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError("webSocketUrl is not a URL") from None
    hub = urlsplit(origin)
    expected = {"http": "ws", "https": "wss"}[hub.scheme]
    if parts.scheme.lower() != expected:
        raise ValueError(f"webSocketUrl must use {expected}:// for a {hub.scheme}:// Hub")
    if parts.fragment or "#" in url:
        raise ValueError("webSocketUrl must not have a fragment")
    if parts.username is not None or parts.password is not None:
        raise ValueError("webSocketUrl must not carry credentials")
    default = 443 if expected == "wss" else 80
    if (parts.hostname or "").lower() != (hub.hostname or "") or (port or default) != (
        hub.port or default
    ):
        raise ValueError("webSocketUrl points to another host than the Hub")
    return url


def sanitize_reason(text: str, limit: int = 160) -> str:
    """A Hub-supplied reason safe to store and print: printable, one line, bounded."""
    return printable(text, limit) or "no reason given"
