"""Every agent provider: its program (found, version), whether it can start agents (the
registry's own availability probe, bounded) and what to do when it cannot.

With the daemon running, the daemon probes (``provider.list`` with ``refresh``): it sees the
PATH and environment agents are started with, which may not be this shell's. Without it, the
provider plugins are loaded here, in this process only (never by ``paseo --help``), and the
same :class:`~paseo.agents.registry.ProviderRegistry` probe runs.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from typing import Any

from paseo.doctor.model import Check, DoctorContext, Status
from paseo.processes.programs import program_version

GROUP = "providers"

PROBE_WAIT = 15.0 + 10.0
"""Seconds for the whole ``provider.list`` refresh: the registry bounds each probe at 15 s
(``paseo.agents.registry.PROBE_TIMEOUT``) and runs them concurrently."""

_NOT_FOUND = re.compile(r"'([^'\s]{1,200})' was not found")
_LOGIN = re.compile(r"log ?in|auth|credential|api[ _-]?key|token", re.IGNORECASE)


def _fix(provider_id: str, status: str, reason: str, *, daemon: bool) -> str | None:
    if status == "ready":
        return None
    if "disabled in config.json" in reason:
        return f"`paseo config set agents.providers.{provider_id}.enabled true` to use it"
    missing = _NOT_FOUND.search(reason)
    if missing:
        program = missing.group(1)
        here = shutil.which(program)
        if daemon and here:
            return (
                f"{program!r} is on this shell's PATH ({here}) but not on the daemon's, which "
                "keeps the PATH it started with: `paseo daemon restart`"
            )
        return (
            f"install {program!r} as the line above says, or give its path: "
            f"`paseo config set agents.providers.{provider_id}.command '[\"/path/to/{program}\"]'`"
        )
    if _LOGIN.search(reason):
        return "log in or set the credentials the reason names, then `paseo doctor` again"
    return "see the reason; docs/providers.md describes each provider's set-up"


def _row(provider: dict[str, Any], *, daemon: bool, program: str | None = None) -> Check:
    availability = provider.get("availability") or {}
    status = str(availability.get("status") or "loading")
    reason = str(availability.get("reason") or "")
    provider_id = str(provider.get("id"))
    label = provider.get("label") or provider_id
    enabled = provider.get("enabled", True)
    result: Status
    if status == "ready":
        result = "ok"
    elif not enabled or status in ("unavailable", "loading"):
        # A provider whose program is not installed is a choice, not a fault: warn.
        result = "ok" if not enabled else "warn"
    else:
        result = "fail"
    parts = [f"{label}: {status}"]
    if program:
        parts.append(program)
    if reason:
        parts.append(reason)
    return Check(
        GROUP,
        provider_id,
        result,
        "; ".join(parts),
        _fix(provider_id, status, reason, daemon=daemon),
    )


def _from_daemon(context: DoctorContext) -> list[dict[str, Any]]:
    from paseo.client.light import LightClient

    with LightClient(None, home=context.home, env={}, request_timeout=PROBE_WAIT) as client:
        providers: list[dict[str, Any]] = client.call("provider.list", {"refresh": True})[
            "providers"
        ]
    return providers


def _program(provider: Any, env: dict[str, str]) -> str | None:
    """``<path>, <version>`` of the program the provider's terminal profile runs, if any."""
    try:
        profile = provider.terminal_profile()
    except Exception:  # noqa: BLE001 - a plugin's fault; the probe's line says more
        return None
    if profile is None or not profile.command:
        return None
    path, version = program_version(profile.command, env)
    return f"{profile.command}: {version}" if path is None else f"{path}: {version}"


def _plugin_failures(manager: Any) -> list[Check]:
    """Plugins that failed to load here: what the daemon would report on its next start."""
    return [
        Check(
            "plugins",
            record.name,
            "fail",
            f"plugin {record.name!r} fails to load: {record.error}",
            f"`paseo plugins info {record.name}`; fix or reinstall it, or "
            f"`paseo plugins disable {record.name}`",
        )
        for record in manager.records
        if record.error and record.unavailable is None
    ]


def _offline(context: DoctorContext) -> tuple[list[Check], list[Check]]:
    """The provider rows and the plugin load failures, probed in this process."""
    from concurrent.futures import ThreadPoolExecutor

    from paseo.agents.registry import ProviderRegistry
    from paseo.config import load_config
    from paseo.doctor.plugins import plugin_manager

    loaded = load_config(context.layout.config, context.env, home=context.home)
    manager, error = plugin_manager(context)
    if manager is None:
        # Strict mode (PASEO_STRICT_PLUGINS=1): the daemon would refuse to start as well.
        return [], [
            Check(
                "plugins",
                "plugins",
                "fail",
                f"{error} (strict mode: PASEO_STRICT_PLUGINS=1 makes any load failure fatal)",
                "fix or remove the plugin named (`paseo plugins disable ID`), or unset "
                "PASEO_STRICT_PLUGINS",
            )
        ]
    overrides = {
        provider_id: entry.model_dump(mode="json", exclude_none=True)
        for provider_id, entry in loaded.resolved.agents.providers.items()
    }
    declared = {pid: p.config_entry() for pid, p in manager.declared_providers().items()}
    registry = ProviderRegistry(manager.providers, lambda: overrides, declared)

    async def probe_all() -> None:
        await asyncio.wait_for(registry.refresh(), PROBE_WAIT)

    asyncio.run(probe_all())
    env = dict(context.env)
    entries = registry.entries()
    # Each `--version` is bounded; run side by side, a hanging program costs its bound once.
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(entries)))) as pool:
        programs = list(
            pool.map(
                lambda entry: _program(entry.provider, env) if entry.provider else None, entries
            )
        )
    rows = [
        _row(
            {
                "id": entry.id,
                "label": entry.label,
                "enabled": entry.enabled,
                "availability": registry.availability(entry.id).availability.model_dump(
                    mode="json"
                ),
            },
            daemon=False,
            program=program,
        )
        for entry, program in zip(entries, programs, strict=True)
    ]
    return rows, _plugin_failures(manager)


def checks(context: DoctorContext) -> list[Check]:
    failures: list[Check] = []
    if context.answering:
        # The daemon's own load failures are the daemon group's (from its status).
        results = [_row(provider, daemon=True) for provider in _from_daemon(context)]
        where = "the daemon's probe"
    else:
        results, failures = _offline(context)
        where = "probed in this process: the daemon is not running"
    ready = [check.name for check in results if check.status == "ok" and check.fix is None]
    if ready:
        results.append(
            Check(
                GROUP, "any provider", "ok", f"ready to start agents ({where}): {', '.join(ready)}"
            )
        )
    else:
        results.append(
            Check(
                GROUP,
                "any provider",
                "fail",
                f"no provider can start agents ({where})",
                "install and log in to the program of one provider above (its line says what "
                "is missing); docs/providers.md lists them",
            )
        )
    return results + failures
