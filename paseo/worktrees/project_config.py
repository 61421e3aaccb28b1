"""A project's ``paseo.json``: the worktree lifecycle commands, terminals and scripts.

For setup the file is read from the *committed* base the worktree starts from (never from a
working copy an agent may have edited); teardown reads the worktree's own committed HEAD,
falling back to the working copy; scripts read the workspace's working copy.

The format (TypeScript Paseo's)::

    {"worktree": {"setup": ..., "teardown": ...,
                  "terminals": [{"name": "dev", "command": "npm run dev"}]},
     "scripts": {"test": {"command": "pytest"},
                 "web": {"command": "npm start", "type": "service", "port": 3000}}}

Lifecycle commands may be a string, a list of strings, or an object keyed by platform
(``linux``, ``darwin``, ``win32``) whose values are either of those. Unknown keys are kept in
:attr:`ProjectConfig.extra` and otherwise ignored. A known key of the wrong shape is a
:class:`ProjectConfigError` naming the file and the key: nothing of a malformed file runs.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

from paseo_hookspecs.errors import InvalidParams

CONFIG_FILE = "paseo.json"

ScriptType = Literal["script", "service"]


class ProjectConfigError(InvalidParams):
    """``paseo.json`` is malformed; ``data`` names the ``path`` and the ``key``."""


@dataclass(frozen=True)
class Script:
    """One ``scripts`` entry: a plain script, or (``type: "service"``) a supervised service."""

    name: str
    command: str
    type: ScriptType = "script"
    port: int | None = None


ServiceScript = Script
"""The former name of a service entry."""


@dataclass(frozen=True)
class TerminalSpec:
    """One ``worktree.terminals`` entry: a named terminal opened with the worktree."""

    name: str
    command: str


@dataclass(frozen=True)
class ProjectConfig:
    """The parts of ``paseo.json`` Paseo uses, and the rest (``extra``) as read."""

    setup: list[str] = field(default_factory=list)
    teardown: list[str] = field(default_factory=list)
    terminals: list[TerminalSpec] = field(default_factory=list)
    scripts: list[Script] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def services(self) -> list[Script]:
        return [s for s in self.scripts if s.type == "service"]

    def script(self, name: str) -> Script | None:
        return next((s for s in self.scripts if s.name == name), None)


SCRIPT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
"""A script name: also a host label of the proxy, so no spaces or dots at the start."""


def _platform_key() -> str:
    if sys.platform.startswith("linux"):
        return "linux"
    return sys.platform  # darwin, win32


def _fail(path: str, key: str, problem: str) -> ProjectConfigError:
    return ProjectConfigError(f"{path}: {key} {problem}", data={"path": path, "key": key})


def _commands(value: Any, path: str, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        for platform, entry in value.items():
            _commands(entry, path, f"{key}.{platform}")
        value = value.get(_platform_key())
        if value is None:
            return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item for item in value if item.strip()]
    raise _fail(path, key, "must be a command, a list of commands or an object by platform")


def lifecycle_commands(value: Any) -> list[str]:
    """Normalize a ``setup``/``teardown`` value to a list of non-blank commands (lenient)."""
    try:
        return _commands(value, CONFIG_FILE, "value")
    except ProjectConfigError:
        return []


def _terminals(value: Any, path: str) -> list[TerminalSpec]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(path, "worktree.terminals", "must be a list of {name, command} objects")
    found: list[TerminalSpec] = []
    for index, entry in enumerate(value):
        key = f"worktree.terminals[{index}]"
        if not isinstance(entry, dict):
            raise _fail(path, key, "must be an object with name and command")
        name, command = entry.get("name"), entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise _fail(path, f"{key}.command", "must be a non-empty string")
        if name is not None and not isinstance(name, str):
            raise _fail(path, f"{key}.name", "must be a string")
        found.append(TerminalSpec(name=name or f"terminal-{index + 1}", command=command))
    return found


def _scripts(value: Any, path: str) -> list[Script]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise _fail(path, "scripts", "must be an object of name → {command, type, port}")
    found: list[Script] = []
    for name, entry in value.items():
        key = f"scripts.{name}"
        if not SCRIPT_NAME.match(name):
            raise _fail(path, key, "is not a valid script name (letters, digits, . _ -)")
        if not isinstance(entry, dict):
            raise _fail(path, key, "must be an object with a command")
        commands = _commands(entry.get("command"), path, f"{key}.command")
        if not commands:
            raise _fail(path, f"{key}.command", "is missing or empty")
        kind = entry.get("type", "script")
        if kind not in ("script", "service"):
            raise _fail(path, f"{key}.type", 'must be "script" or "service"')
        port = entry.get("port")
        if port is not None and (
            isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536
        ):
            raise _fail(path, f"{key}.port", "must be a TCP port (1-65535)")
        found.append(Script(name=name, command=" && ".join(commands), type=kind, port=port))
    return found


def parse_project_config(data: bytes | None, *, path: str = CONFIG_FILE) -> ProjectConfig:
    """Parse ``paseo.json`` bytes (``None``: no file); malformed → :class:`ProjectConfigError`."""
    if data is None:
        return ProjectConfig()
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise ProjectConfigError(
            f"{path} is not valid JSON: {exc}", data={"path": path, "key": None}
        ) from None
    if not isinstance(document, dict):
        raise _fail(path, "(top level)", "must be a JSON object")
    worktree = document.get("worktree")
    if worktree is None:
        worktree = {}
    if not isinstance(worktree, dict):
        raise _fail(path, "worktree", "must be an object")
    return ProjectConfig(
        setup=_commands(worktree.get("setup"), path, "worktree.setup"),
        teardown=_commands(worktree.get("teardown"), path, "worktree.teardown"),
        terminals=_terminals(worktree.get("terminals"), path),
        scripts=_scripts(document.get("scripts"), path),
        extra={k: v for k, v in document.items() if k not in ("worktree", "scripts")},
    )
