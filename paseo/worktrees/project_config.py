"""A project's ``paseo.json``: the worktree lifecycle commands and scripts.

For setup the file is read from the *committed* base the worktree starts from (never from a
working copy an agent may have edited); teardown reads the worktree's own committed HEAD,
falling back to the working copy. Parsing is forgiving the way TypeScript Paseo's is: a
malformed section means "no commands" rather than a failure, except when the file is not JSON.

Lifecycle commands may be a string, a list of strings, or an object keyed by platform
(``linux``, ``darwin``, ``win32``) whose values are either of those.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from paseo_hookspecs.errors import InvalidParams

CONFIG_FILE = "paseo.json"


@dataclass(frozen=True)
class ServiceScript:
    """A ``scripts`` entry of ``type: "service"``."""

    name: str
    command: str
    port: int | None = None


@dataclass(frozen=True)
class ProjectConfig:
    """The parts of ``paseo.json`` the worktree service uses."""

    setup: list[str] = field(default_factory=list)
    teardown: list[str] = field(default_factory=list)
    services: list[ServiceScript] = field(default_factory=list)


def _platform_key() -> str:
    if sys.platform.startswith("linux"):
        return "linux"
    return sys.platform  # darwin, win32


def lifecycle_commands(value: Any) -> list[str]:
    """Normalize a ``setup``/``teardown`` value to a list of non-blank commands."""
    if isinstance(value, dict):
        value = value.get(_platform_key())
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str) and item.strip()]
    return []


def parse_project_config(data: bytes | None) -> ProjectConfig:
    """Parse ``paseo.json`` bytes (``None``: no file). Not JSON → :class:`InvalidParams`."""
    if data is None:
        return ProjectConfig()
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise InvalidParams(f"{CONFIG_FILE} is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        return ProjectConfig()
    worktree = document.get("worktree")
    worktree = worktree if isinstance(worktree, dict) else {}
    services: list[ServiceScript] = []
    scripts = document.get("scripts")
    if isinstance(scripts, dict):
        for name, entry in scripts.items():
            if not isinstance(entry, dict) or entry.get("type") != "service":
                continue
            commands = lifecycle_commands(entry.get("command"))
            port = entry.get("port")
            services.append(
                ServiceScript(
                    name=name,
                    command=" && ".join(commands),
                    port=port if isinstance(port, int) and 0 < port < 65536 else None,
                )
            )
    return ProjectConfig(
        setup=lifecycle_commands(worktree.get("setup")),
        teardown=lifecycle_commands(worktree.get("teardown")),
        services=services,
    )
