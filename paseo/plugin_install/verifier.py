"""The verifier child process: load one prepared plugin strictly and report what it registers.

Run as ``python -P -m paseo.plugin_install.verifier RESULT`` with the request (JSON) on stdin;
the report is written to ``RESULT`` (not stdout, which the plugin may print to). ``-P`` keeps the
working directory off ``sys.path``. Built-in plugins are not loaded, so a broken or absent
built-in cannot fail someone else's verification.

A directory plugin is loaded under a fixed alias instead of its id: what it registers does not
depend on its name, and the alias cannot collide with a built-in it is allowed to shadow.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import InvalidParams

VERIFY_ALIAS = "paseo-verify-candidate"


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_manifest(request: dict[str, Any]) -> dict[str, Any] | None:
    from paseo.plugin_install.layout import identify
    from paseo.plugins.manifests import missing_bins, pyproject_manifest

    path = Path(request["path"])
    manifest = pyproject_manifest(path)
    if manifest is None:
        return None
    if request.get("kind") == "npm":
        missing = missing_bins(manifest, path, identify("npm", path).package_dir)
        if missing:
            raise InvalidParams(f"manifest names executables the package lacks: {missing}")
    return manifest.to_json()


def _load(request: dict[str, Any]) -> tuple[Any, list[Any]]:
    from paseo_hookspecs import HOOK_GROUP

    from paseo.plugins import LoadPolicy, PaseoPluginManager
    from paseo.plugins.discovery import entry_point_candidates

    entries: dict[str, dict[str, Any]] = {
        c.name: {"enabled": False} for c in entry_point_candidates(HOOK_GROUP) if c.builtin
    }
    if request["mode"] == "directory":
        entries[VERIFY_ALIAS] = {"source": "directory", "path": request["path"], "enabled": True}
        names = {VERIFY_ALIAS}
    else:
        names = set(request["entryPoints"])
    manager = PaseoPluginManager(
        LoadPolicy(strict=True, only=frozenset(names), plugins_enabled=True, entries=entries)
    )
    manager.load_all()
    records = [
        r
        for r in manager.records
        if r.kind == "hooks" and not r.builtin and r.name.split(":")[0] in names
    ]
    if not records:
        raise InvalidParams("no plugin was found to load")
    failed = [r for r in records if not r.loaded]
    if failed:
        raise InvalidParams(f"{failed[0].name} did not load: {failed[0].error}")
    return manager, records


def _check_declared_ids(manager: Any) -> None:
    """Refuse a manifest provider whose id a built-in provider has. The built-ins are not loaded
    next to the candidate, so the loader's own check cannot see them: load them apart."""
    from paseo.plugins import LoadPolicy, PaseoPluginManager

    declared = manager.declared_providers()
    if not declared:
        return
    builtins = PaseoPluginManager(LoadPolicy(only=frozenset()))
    builtins.load_all()
    taken = sorted(set(declared) & set(builtins.providers()))
    if taken:
        raise InvalidParams(
            f"its manifest declares provider {taken[0]!r}, which is a built-in provider; "
            "refused (give the declared provider another id)"
        )


def _check_registrations(manager: Any, settings: Any) -> dict[str, Any]:
    from paseo_hookspecs.interfaces.agent import AgentProvider
    from paseo_hookspecs.interfaces.source import PluginSource
    from paseo_hookspecs.interfaces.transport import Transport

    providers = manager.providers()
    transports = manager.transports()
    sources = manager.plugin_sources()
    for label, found, expected in (
        ("provider", providers, AgentProvider),
        ("transport", transports, Transport),
        ("plugin source", sources, PluginSource),
    ):
        for key, obj in found.items():
            if not isinstance(obj, expected):
                raise InvalidParams(
                    f"{label} {key!r} is a {type(obj).__name__}, not a {expected.__name__}"
                )
    commands = [group.name for group in manager.cli_command_groups()]
    methods = [m.name for _, group in manager.rpc_method_groups() for m in group.methods]
    for section in manager.config_sections().values():
        if settings is not None:
            section.model.model_validate(settings)
    return {
        "providers": sorted(providers),
        "transports": sorted(transports),
        "sources": sorted(sources),
        "commands": commands,
        "methods": methods,
    }


def _verify(request: dict[str, Any]) -> dict[str, Any]:
    manifest = _check_manifest(request) if request["mode"] == "directory" else None
    manager, records = _load(request)
    _check_declared_ids(manager)
    report = _check_registrations(manager, request.get("settings"))
    hooks = sorted({hook for record in records for hook in record.hooks})
    return {"ok": True, "hooks": hooks, "manifest": manifest, **report}


def main(argv: list[str]) -> int:
    """Child entry point: read the request on stdin, write the report to ``argv[0]``."""
    result_path = Path(argv[0])
    request: dict[str, Any] = {}
    try:
        request = json.loads(sys.stdin.read())
        report = _verify(request)
    except BaseException as exc:  # noqa: BLE001 - any failure of the plugin is the report
        # SystemExit and KeyboardInterrupt raised by plugin code are failures to report too.
        error = _describe(exc).replace(VERIFY_ALIAS, str(request.get("id", VERIFY_ALIAS)))
        report = {"ok": False, "error": error}
    result_path.write_text(json.dumps(report), encoding="utf-8")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
