"""The fake Hub's records: tokens, enrolled daemons and executions."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

ENROLL_KEYS = frozenset(
    {
        "daemonId",
        "idempotencyKey",
        "serverId",
        "daemonPublicKey",
        "credentialVerifier",
        "hostname",
        "scopes",
    }
)
REQUIRED_KEYS = ENROLL_KEYS - {"hostname", "scopes"}
VERIFIER = re.compile(r"^[A-Za-z0-9_-]{43}$")

ExecutionState = Literal["pending", "running", "finished", "failed"]


def verifier(secret: str) -> str:
    digest = hashlib.sha256(secret.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def slugify(hostname: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", hostname.lower()).strip("-")
    return slug or "daemon"


def enroll_problem(body: Any) -> str | None:
    """Why the strict enroll schema refuses ``body`` (``None``: valid)."""
    if not isinstance(body, dict):
        return "not an object"
    unknown = set(body) - ENROLL_KEYS
    if unknown:
        return f"unknown keys {sorted(unknown)}"
    missing = REQUIRED_KEYS - set(body)
    if missing:
        return f"missing keys {sorted(missing)}"
    for key in REQUIRED_KEYS:
        if not isinstance(body[key], str) or not body[key]:
            return f"{key} must be a non-empty string"
    try:
        daemon_id = uuid.UUID(body["daemonId"])
    except ValueError:
        return "daemonId is not a UUID"
    if daemon_id.version != 4 or str(daemon_id) != body["daemonId"].lower():
        return "daemonId is not a v4 UUID"
    if not VERIFIER.match(body["credentialVerifier"]):
        return "credentialVerifier is not an unpadded base64url SHA-256"
    hostname = body.get("hostname")
    if hostname is not None and (not isinstance(hostname, str) or not 1 <= len(hostname) <= 253):
        return "hostname must be 1-253 characters"
    scopes = body.get("scopes")
    if scopes is not None and not isinstance(scopes, list):
        return "scopes must be a list"
    return None


@dataclass
class Token:
    value: str
    expires_at: float
    used_by: str | None = None


@dataclass
class Daemon:
    daemon_id: str
    idempotency_key: str
    token: str
    verifier: str
    slug: str
    server_id: str
    public_key: str
    revoked: bool = False
    generation: int = 0
    """Accepted sockets so far; the newest one is the live one."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Every session message received, in order."""


@dataclass
class Execution:
    execution_id: str
    daemon_id: str
    request: dict[str, Any]
    """The create request without ``type`` and ``requestId`` (re-sent on every socket)."""
    completion_token: str
    auto_archive: bool = True
    state: ExecutionState = "pending"
    agent_id: str | None = None
    agent: dict[str, Any] | None = None
    failure: str | None = None
    create_attempts: int = 0
    responses: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    """``stream`` events, in arrival order."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    """``update`` agent snapshots, in arrival order."""
    pending_control: str | None = None
    finish: dict[str, Any] | None = None
    """The arguments of the agent's ``finish_execution`` MCP call."""

    @property
    def live(self) -> bool:
        return self.state in ("pending", "running")
