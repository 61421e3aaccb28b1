"""Per-agent environment variables: what a kernel caller adds to an agent's program environment
at creation (a Hub create's ``env``: the Hub's config and materialised secrets).

They may be secrets, so they are never part of the record (every client is sent records and
the store keeps them readable): each agent's set lives in ``<directory>/<agentId>.json``, 0600
from creation and written atomically **before** the record is first stored, so every session
the agent ever starts (created, resumed after a restart, reloaded) gets the same variables.
A deleted agent (a tombstone in the trash) keeps its file, so a restored agent starts with
the same variables; the trash's cleanup removes it once the agent is purged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path

from paseo_hookspecs.atomic import atomic_write_json, read_json, sweep_temp_files
from paseo_hookspecs.errors import InvalidParams

log = logging.getLogger("paseo.agents")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED = frozenset({"PASEO_AGENT_ID"})
"""Set by the kernel for every agent; a caller cannot replace it."""
MAX_VARIABLES = 500
MAX_VALUE = 128 * 1024


def checked(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` when every name and value can be put in a process environment, else
    ``InvalidParams`` naming the first bad entry."""
    if len(env) > MAX_VARIABLES:
        raise InvalidParams(f"env has {len(env)} variables; at most {MAX_VARIABLES} are accepted")
    for name, value in env.items():
        if not _NAME.fullmatch(name):
            raise InvalidParams(
                f"env name {name!r} is not a variable name (letters, digits and _, not "
                "starting with a digit)"
            )
        if name in RESERVED:
            raise InvalidParams(f"env may not set {name}: the daemon sets it for every agent")
        if "\0" in value or len(value) > MAX_VALUE:
            raise InvalidParams(
                f"env value of {name} holds a NUL byte or is longer than {MAX_VALUE} characters"
            )
    return dict(env)


class AgentEnvironments:
    """The per-agent variables under ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._cache: dict[str, dict[str, str]] = {}
        # Made once at start-up, before any agent's variables are written or read: a write
        # killed half-way left a temporary copy of someone's secrets, which nothing else removes
        # (one directory listing; the daemon's home lock makes this the only writer).
        sweep_temp_files(directory)

    def _path(self, agent_id: str) -> Path:
        return self._directory / f"{agent_id}.json"

    async def put(self, agent_id: str, env: Mapping[str, str]) -> None:
        """Store ``env`` (checked) for ``agent_id``; nothing is written for an empty set."""
        values = checked(env)
        if values:
            await asyncio.to_thread(self._write, agent_id, values)
        self._cache[agent_id] = values

    def _write(self, agent_id: str, values: dict[str, str]) -> None:
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_json(self._path(agent_id), values, mode=0o600)

    async def get(self, agent_id: str) -> dict[str, str]:
        """The variables of ``agent_id`` (``{}`` when it has none or its file is damaged)."""
        cached = self._cache.get(agent_id)
        if cached is None:
            cached = await asyncio.to_thread(self._read, agent_id)
            self._cache[agent_id] = cached
        return dict(cached)

    def _read(self, agent_id: str) -> dict[str, str]:
        path = self._path(agent_id)
        try:
            stored = read_json(path)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s is unreadable (%s); agent %s starts without it", path, exc, agent_id)
            return {}
        if not isinstance(stored, dict):
            log.warning("%s is not an object; agent %s starts without it", path, agent_id)
            return {}
        return {k: v for k, v in stored.items() if isinstance(k, str) and isinstance(v, str)}

    async def forget(self, agent_id: str) -> None:
        """Remove ``agent_id``'s variables (its record is not stored, or it was purged)."""
        self._cache.pop(agent_id, None)
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(os.unlink, self._path(agent_id))
