"""``paseo plugins …``: list plugins and their load status; install, update and remove managed
plugins (git, npm, PyPI, directory); enable, disable and inspect them."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from paseo.cli.output import emit

if TYPE_CHECKING:
    from paseo.plugin_install import PluginInstaller, PluginManifest

COLUMNS = (
    ("name", "NAME"),
    ("version", "VERSION"),
    ("distribution", "DISTRIBUTION"),
    ("builtin", "BUILTIN"),
    ("hooks", "HOOKS"),
    ("source", "SOURCE"),
    ("enabled", "ENABLED"),
    ("error", "ERROR"),
)

OUTCOME_COLUMNS = (
    ("id", "ID"),
    ("kind", "KIND"),
    ("action", "ACTION"),
    ("revision", "REVISION"),
    ("previousRevision", "PREVIOUS"),
    ("enabled", "ENABLED"),
    ("notes", "NOTES"),
)

DISABLED_NOTE = (
    'third-party plugins are off (`"pluginsEnabled": false` in config.json), so this plugin '
    "will not load: run `paseo config set pluginsEnabled true`"
)

RESTART_NOTE = (
    "the daemon is running and loads plugins only when it starts: run `paseo daemon restart` "
    "to apply this change"
)

SOURCE_HELP = (
    "a Git URL (https://, ssh://, file://) or local repository, optionally @REF; "
    "npm:PACKAGE[@VERSION] or a .tgz; pypi:REQUIREMENT or a .whl; or a plugin directory"
)


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("list", aliases=["ls"], help="list plugins and their load status")
    ls.add_argument(
        "--all", action="store_true", help="include built-in plugins (unavailable ones always)"
    )
    ls.add_argument("--hook", metavar="NAME", help="only plugins implementing hook NAME")
    ls.set_defaults(run=run_list)

    install = subs.add_parser("install", help="install a plugin from git, npm, PyPI or a path")
    install.add_argument("source", metavar="SOURCE", help=SOURCE_HELP)
    install.add_argument("--id", dest="plugin_id", help="plugin id (default: from its name)")
    state = install.add_mutually_exclusive_group()
    state.add_argument(
        "--enable", dest="enabled", action="store_const", const=True, help="enable it (default)"
    )
    state.add_argument(
        "--disabled", dest="enabled", action="store_const", const=False, help="install disabled"
    )
    install.add_argument(
        "--allow-builtin-shadow",
        action="store_true",
        help="allow an id that a built-in plugin or driver uses",
    )
    install.add_argument(
        "--allow-scripts", action="store_true", help="let npm run the package's install scripts"
    )
    install.add_argument(
        "--provider-id", help="npm: declare an ACP agent provider with this id (no manifest)"
    )
    install.add_argument("--provider-label", help="npm: the declared provider's label")
    install.add_argument("--bin", help="npm: the package executable that starts the agent")
    install.add_argument(
        "--provider-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="npm: environment for the declared provider (repeatable)",
    )
    install.set_defaults(run=run_install)

    update = subs.add_parser("update", help="fetch a managed plugin again and activate it")
    update.add_argument("plugin_id", nargs="?", metavar="ID")
    update.add_argument("--all", action="store_true", help="update every managed plugin")
    update.add_argument("--ref", help="git: the tag, branch or commit to move to (HEAD: default)")
    update.set_defaults(run=run_update)

    remove = subs.add_parser("remove", aliases=["rm"], help="remove a managed plugin")
    remove.add_argument("plugin_id", metavar="ID")
    remove.set_defaults(run=run_remove)

    for name, enabled in (("enable", True), ("disable", False)):
        sub = subs.add_parser(name, help=f"{name} a plugin (config.json plugins.<id>.enabled)")
        sub.add_argument("plugin_id", metavar="ID")
        sub.set_defaults(run=run_enable, enabled=enabled)

    info = subs.add_parser("info", help="show a managed or directory plugin")
    info.add_argument("plugin_id", metavar="ID")
    info.set_defaults(run=run_info)


def run_list(args: argparse.Namespace) -> int:
    from paseo.cli.context import plugin_manager

    manager = plugin_manager(args.home)
    # A built-in whose extra is not installed is listed without --all: the row says what to
    # install to use it.
    rows = [
        r.to_json()
        for r in manager.records
        if (args.all or not r.builtin or r.unavailable is not None)
        and (args.hook is None or args.hook in r.hooks)
    ]
    emit(args, rows, columns=COLUMNS, id_key="name")
    return 0


def _installer(args: argparse.Namespace, *, with_sources: bool = True) -> PluginInstaller:
    """An installer with the plugin sources of built-in and installed (entry-point) plugins.

    Directory plugins and pypi-managed plugins are not loaded here: the command may be the
    repair of exactly such a plugin, and their code must not run in this process.
    """
    from paseo.cli.context import home_layout
    from paseo.config import load_config
    from paseo.plugin_install import PluginInstaller
    from paseo.plugin_install.sources_file import PypiPluginSource, read_sources
    from paseo.plugins import LoadPolicy, PaseoPluginManager

    layout = home_layout(args)
    if not with_sources:
        return PluginInstaller(layout, {})
    loaded = load_config(layout.config)
    policy_entries: dict[str, dict[str, Any]] = {
        name: {"enabled": entry.get("enabled") is not False}
        for name, entry in loaded.plugin_entries.items()
        if entry.get("source") != "directory"
    }
    for name, record in read_sources(layout.plugin_sources).items():
        if isinstance(record, PypiPluginSource):
            policy_entries[name] = {"enabled": False}
    base = LoadPolicy.from_environment(
        plugins_enabled=loaded.plugins_enabled, entries=policy_entries
    )
    # Not strict: a broken third-party plugin must not prevent repairing it.
    manager = PaseoPluginManager(
        LoadPolicy(
            strict=False,
            only=base.only,
            plugins_enabled=base.plugins_enabled,
            entries=base.entries,
        )
    )
    # Their load failures are reported by `paseo plugins list`; here they would only bury the
    # command's own output under tracebacks.
    plugin_log = logging.getLogger("paseo.plugins")
    quiet = logging.NullHandler()
    plugin_log.addHandler(quiet)
    propagate, plugin_log.propagate = plugin_log.propagate, False
    try:
        manager.load_all()
        sources = manager.plugin_sources()
    finally:
        plugin_log.removeHandler(quiet)
        plugin_log.propagate = propagate
    return PluginInstaller(layout, sources)


def _restart_notes(args: argparse.Namespace, result: dict[str, Any]) -> dict[str, Any]:
    from paseo.cli.context import home_layout
    from paseo.daemon.control import lock_is_held

    running = lock_is_held(home_layout(args))
    changed = result.get("action") not in ("unchanged", None)
    result["restartRequired"] = running and changed
    if result["restartRequired"]:
        result["notes"] = [*result.get("notes", []), RESTART_NOTE]
    return result


def _manifest(args: argparse.Namespace) -> PluginManifest | None:
    from paseo.cli.errors import EXIT_USAGE, CliError
    from paseo.plugins.manifests import parse_manifest

    given = args.provider_id or args.provider_label or args.bin or args.provider_env
    if not given:
        return None
    if not (args.provider_id and args.bin):
        raise CliError("--provider-id and --bin are both required", exit_code=EXIT_USAGE)
    env = {}
    for item in args.provider_env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--provider-env {item!r}: expected KEY=VALUE", exit_code=EXIT_USAGE)
        env[key] = value
    provider = {
        "id": args.provider_id,
        "label": args.provider_label or args.provider_id,
        "bin": args.bin,
        "env": env,
    }
    manifest: PluginManifest = parse_manifest({"providers": [provider]}, "command-line flags")
    return manifest


def run_install(args: argparse.Namespace) -> int:
    import asyncio

    installer = _installer(args)
    outcome = asyncio.run(
        installer.install(
            args.source,
            plugin_id=args.plugin_id,
            enabled=args.enabled,
            allow_builtin_shadow=args.allow_builtin_shadow,
            manifest=_manifest(args),
            allow_scripts=args.allow_scripts,
        )
    )
    result = _restart_notes(args, outcome.to_json())
    if not _plugins_enabled(args):
        result["notes"] = [*result["notes"], DISABLED_NOTE]
    emit(args, result)
    return 0


def _plugins_enabled(args: argparse.Namespace) -> bool:
    from paseo.cli.context import home_layout
    from paseo.config import load_config

    return load_config(home_layout(args).config).plugins_enabled


def run_update(args: argparse.Namespace) -> int:
    import asyncio

    from paseo.cli.errors import EXIT_USAGE, CliError

    if args.all == bool(args.plugin_id):
        raise CliError("give a plugin ID or --all", exit_code=EXIT_USAGE)
    if args.all and args.ref:
        raise CliError("--ref applies to one plugin, not --all", exit_code=EXIT_USAGE)
    installer = _installer(args)
    if args.all:
        outcomes = asyncio.run(installer.update_all())
        rows = [_restart_notes(args, outcome.to_json()) for outcome in outcomes]
        emit(args, rows, columns=OUTCOME_COLUMNS)
        return 0
    outcome = asyncio.run(installer.update(args.plugin_id, ref=args.ref))
    emit(args, _restart_notes(args, outcome.to_json()))
    return 0


def run_remove(args: argparse.Namespace) -> int:
    import asyncio

    outcome = asyncio.run(_installer(args).remove(args.plugin_id))
    emit(args, _restart_notes(args, outcome.to_json()))
    return 0


def run_enable(args: argparse.Namespace) -> int:
    import asyncio

    installer = _installer(args, with_sources=False)
    outcome = asyncio.run(installer.set_enabled(args.plugin_id, args.enabled))
    emit(args, _restart_notes(args, outcome.to_json()))
    return 0


def run_info(args: argparse.Namespace) -> int:
    import asyncio

    emit(args, asyncio.run(_installer(args, with_sources=False).info(args.plugin_id)))
    return 0
