"""Per-agent capability tokens: ``<agentId>.<HMAC-SHA256(key, agentId)>``.

The key is random, made at every daemon start and kept in ``token.key`` (0600 from creation)
in the plugin's state directory: it cannot be guessed, a restart makes every earlier token
worthless (an agent resumed after one gets a fresh URL), and the tokens themselves are stored
nowhere. The file lets the daemon's own user (and its tests) derive a token as the daemon does;
that user can read the local credential too, so it opens nothing new.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from paseo_hookspecs.atomic import atomic_write_bytes

KEY_FILE = "token.key"


class CapabilityTokens:
    def __init__(self, key: bytes) -> None:
        self._key = key

    @classmethod
    def rotate(cls, state_dir: Path) -> CapabilityTokens:
        """A fresh key, written to ``state_dir`` before any token is issued with it."""
        key = secrets.token_bytes(32)
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_bytes(state_dir / KEY_FILE, key.hex().encode(), mode=0o600)
        return cls(key)

    @classmethod
    def load(cls, state_dir: Path) -> CapabilityTokens:
        """The tokens of the key the running daemon wrote (for its own user's tools)."""
        return cls(bytes.fromhex((state_dir / KEY_FILE).read_text().strip()))

    def _mac(self, agent_id: str) -> str:
        return hmac.new(self._key, agent_id.encode(), hashlib.sha256).hexdigest()

    def issue(self, agent_id: str) -> str:
        return f"{agent_id}.{self._mac(agent_id)}"

    def verify(self, token: str) -> str | None:
        """The agent id ``token`` was issued for, ``None`` when it is not valid."""
        agent_id, _, mac = token.rpartition(".")
        if agent_id and hmac.compare_digest(mac, self._mac(agent_id)):
            return agent_id
        return None

    def __repr__(self) -> str:  # never the key
        return "CapabilityTokens(<key>)"
