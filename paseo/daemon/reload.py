"""Re-reading ``config.json`` inside the running daemon.

The file is loaded again with the *launch* environment, so environment overrides stay
authoritative. The effective values before and after are compared path by path; changed paths
that are safe to change live (:data:`RUNTIME_SAFE`) are applied at once, every other changed
path is reported as needing a restart. A config.json that does not validate as start-up would
validate it changes nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import logging.handlers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paseo.config import ResolvedConfig, load_for_startup
from paseo.config.secrets import REDACTED, redact

if TYPE_CHECKING:
    from paseo.daemon.runtime import Daemon

log = logging.getLogger("paseo.daemon")

RUNTIME_SAFE: tuple[str, ...] = (
    "log.level",
    "log.console.level",
    "log.file.level",
    "daemon.hostnames",
    "daemon.cors",
    "daemon.trustedProxies",
    "daemon.auth.password",
    "daemon.git",
    "daemon.appendSystemPrompt",
    "daemon.terminalProfiles",
    "daemon.terminalScrollback",
    "daemon.maxTerminals",
    "daemon.agentProfiles",
    "daemon.budgets",
    "app.baseUrl",
    "agents.defaultProvider",
)
"""Config paths (and everything under them) a reload applies live. Services read these from
their :class:`paseo.services.ConfigView` each time they need them; the RPC server's trust
settings are rebuilt. Plugins add theirs (``ConfigSection.live``: :func:`runtime_safe_paths`)."""

# REDACTED and redact come from paseo.config.secrets: one definition of a secret for the
# daemon's answers and the CLI's output.
__all__ = [
    "REDACTED",
    "RUNTIME_SAFE",
    "ReloadOutcome",
    "apply_log_levels",
    "changed_paths",
    "is_runtime_safe",
    "redact",
    "reload_config",
    "reported_paths",
]


@dataclass(frozen=True)
class ReloadOutcome:
    changed: list[str]
    applied: list[str]
    restart_required: list[str]
    warnings: list[str]


Path = tuple[str, ...]
_MISSING = object()


def _flatten(value: Any, prefix: Path, out: dict[Path, Any]) -> None:
    # Lists are leaves: a list-valued setting is always replaced whole. An empty document
    # (no file) has no leaves at all.
    if isinstance(value, Mapping) and (value or not prefix):
        for key, child in value.items():
            _flatten(child, (*prefix, str(key)), out)
    else:
        out[prefix] = value


def _changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[Path, Any]:
    """Changed leaf paths -> their value in ``before`` (:data:`_MISSING` when absent)."""
    old: dict[Path, Any] = {}
    new: dict[Path, Any] = {}
    _flatten(before, (), old)
    _flatten(after, (), new)
    return {
        path: old.get(path, _MISSING)
        for path in sorted(old.keys() | new.keys())
        if old.get(path, _MISSING) != new.get(path, _MISSING)
    }


def changed_paths(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Leaf paths (dotted) whose value differs between two JSON documents."""
    return [".".join(path) for path in _changes(before, after)]


def reported_paths(
    old_document: Mapping[str, Any], new_document: Mapping[str, Any], effective: Mapping[Path, Any]
) -> list[str]:
    """The leaf paths of the file that changed since ``old_document`` (the one the daemon
    started with) whose effective value changed too (``effective``: the in-force view against
    the new one, so a restart-only change stays reported until the restart).

    The effective view holds every field with its default: an added provider entry changes a
    dozen of its paths there. Users wrote two; those are the ones worth a line each.
    """

    def related(path: Path) -> bool:
        return any(
            path[: len(other)] == other or other[: len(path)] == path for other in effective
        )

    return [".".join(path) for path in _changes(old_document, new_document) if related(path)]


def _keep_startup_values(
    before: ResolvedConfig, after: ResolvedConfig, restore: dict[Path, Any]
) -> ResolvedConfig:
    """``after`` with the restart-only paths put back to the values the daemon runs with, so
    ``daemon.config`` keeps describing the running process."""
    if not restore:
        return after
    data = after.to_json()
    for path, value in restore.items():
        parent: Any = data
        for key in path[:-1]:
            parent = parent.setdefault(key, {})
        if value is _MISSING:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
    merged = ResolvedConfig.model_validate(data)
    # The launch-only plain password is excluded from dumps; carry it over.
    auth = merged.daemon.auth.model_copy(update={"envPassword": before.daemon.auth.envPassword})
    return merged.model_copy(update={"daemon": merged.daemon.model_copy(update={"auth": auth})})


def runtime_safe_paths(daemon: Daemon) -> tuple[str, ...]:
    """:data:`RUNTIME_SAFE`, plus the live settings of the loaded plugins' sections."""
    plugins = daemon.plugins
    sections = plugins.config_sections() if plugins is not None else {}
    return RUNTIME_SAFE + tuple(
        f"plugins.{plugin_id}.settings.{key}"
        for plugin_id, section in sorted(sections.items())
        for key in sorted(section.live)
    )


def is_runtime_safe(path: str, safe_paths: tuple[str, ...] = RUNTIME_SAFE) -> bool:
    return any(path == safe or path.startswith(safe + ".") for safe in safe_paths)


def apply_log_levels(resolved: ResolvedConfig) -> None:
    """Set the levels of the daemon's existing log handlers (file and console)."""
    from paseo.logs import LEVELS

    root = logging.getLogger("paseo")
    levels: list[int] = []
    for handler in root.handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            handler.setLevel(LEVELS.get(resolved.log.file.level, logging.INFO))
        elif isinstance(handler, logging.StreamHandler):
            handler.setLevel(LEVELS.get(resolved.log.console.level, logging.INFO))
        levels.append(handler.level)
    if levels:
        root.setLevel(min(levels))


async def reload_config(daemon: Daemon) -> ReloadOutcome:
    """Re-read config.json once and apply what can be applied live.

    Raises :class:`paseo.config.ConfigError` (nothing applied) when the file is invalid or
    would stop the next start (an unknown store driver, bad plugin settings).
    """
    loaded = await asyncio.to_thread(
        load_for_startup, daemon.layout.config, daemon.options.env, home=daemon.layout.root
    )
    before = daemon.config.resolved
    changes = _changes(before.to_json(), loaded.resolved.to_json())
    changed = reported_paths(daemon.launch_document, loaded.document, changes)
    safe = runtime_safe_paths(daemon)
    applied = [path for path in changed if is_runtime_safe(path, safe)]
    restart = [path for path in changed if not is_runtime_safe(path, safe)]
    after = _keep_startup_values(
        before,
        loaded.resolved,
        {path: old for path, old in changes.items() if not is_runtime_safe(".".join(path), safe)},
    )
    daemon.config = dataclasses.replace(loaded, resolved=after)
    if any(path.startswith("log.") for path in applied):
        apply_log_levels(after)
    rpc = daemon.rpc
    if rpc is not None:
        rpc.apply_config(after)
    if changed:
        log.info(
            "config reloaded: applied %s; restart required for %s",
            applied or "nothing",
            restart or "nothing",
        )
    return ReloadOutcome(
        changed=changed,
        applied=applied,
        restart_required=restart,
        warnings=[str(w) for w in loaded.warnings],
    )
