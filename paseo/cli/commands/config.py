"""``paseo config``: read, change and validate ``$PASEO_HOME/config.json``.

These commands work on the file directly and need no running daemon. A running daemon picks up
a change on ``paseo daemon reload`` (or restart, for startup-only settings).

:mod:`paseo.config` (and with it pydantic) is imported inside the handlers so that building
the parser, e.g. for ``paseo config --help``, stays cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo.cli.errors import EXIT_FAILURE, EXIT_USAGE, CliError
from paseo.cli.output import emit
from paseo.home import HomeLayout, resolve_home

if TYPE_CHECKING:

    from paseo.config import ConfigProblem

_PATH_HELP = (
    "dotted JSON path such as daemon.git.maxProcessConcurrency; "
    'use ["key"] for keys with dots and [N] for list items'
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``get``, ``set`` and ``validate`` sub-commands."""
    # Global options (-o, --home, ...) are also accepted after the sub-command.

    sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    get = sub.add_parser(
        "get",
        help="print a value stored in config.json (or the effective value)",
        description="Print the value at PATH as stored in config.json (legacy keys migrated), "
        "or the whole document without PATH. With --effective, print the value the daemon "
        "would use: defaults and environment overrides of this shell included.",
    )
    get.add_argument("path", nargs="?", metavar="PATH", help=_PATH_HELP)
    get.add_argument(
        "--effective",
        action="store_true",
        help="resolve defaults and PASEO_* environment overrides",
    )
    _add_show_secrets(get)
    get.set_defaults(run=_run_get)

    set_ = sub.add_parser(
        "set",
        help="change one value in config.json",
        description="Set PATH to VALUE in config.json and nothing else. VALUE is parsed as "
        'JSON when it is valid JSON (8, true, ["a"], {...}), otherwise it is a string; null '
        "removes the key. The whole file must still be valid, or nothing is written.",
    )
    set_.add_argument("path", metavar="PATH", help=_PATH_HELP)
    set_.add_argument("value", metavar="VALUE", help="JSON value, or plain text for a string")
    set_.add_argument(
        "--string", action="store_true", help="store VALUE as a string even if it is valid JSON"
    )
    _add_show_secrets(set_)
    set_.set_defaults(run=_run_set)

    validate = sub.add_parser(
        "validate",
        help="check config.json and list its problems",
        description="Check a config file (default: the home's config.json). Exits 1 when it "
        "has errors; migrated legacy keys, unknown keys and agents.providers entries that "
        "extend no installed provider are reported as warnings.",
    )
    validate.add_argument("file", nargs="?", metavar="FILE", help="file to check")
    validate.set_defaults(run=_run_validate)


def _add_show_secrets(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--show-secrets",
        action="store_true",
        help="print API keys and passwords as stored (hidden by default: a speech site says "
        "hasApiKey, other secrets ********)",
    )


def _shown(args: argparse.Namespace, data: Any, segments: tuple[str | int, ...]) -> Any:
    """The value at ``segments`` as this command may print it: secrets hidden (as the daemon's
    ``config.get`` hides them) unless ``--show-secrets``. Raises ``KeyError`` when not set."""
    from paseo.config import get_path
    from paseo.config.secrets import REDACTED, public_view

    value = get_path(data, segments)
    if getattr(args, "show_secrets", False):
        return value
    try:
        return get_path(public_view(data), segments)
    except KeyError:
        # A speech site's apiKey, which the public view turns into hasApiKey.
        return REDACTED


def _layout(args: argparse.Namespace) -> HomeLayout:
    return HomeLayout(resolve_home(getattr(args, "home", None)))


def _warn(file: Path, problems: Iterable[ConfigProblem]) -> None:
    for problem in problems:
        sys.stderr.write(f"paseo: warning: {file}: {problem}\n")


def _run_get(args: argparse.Namespace) -> int:
    # Only --effective needs the models (pydantic); showing the file does not.
    from paseo.config import ConfigError, parse_path, read_document
    from paseo.config.jsonpath import PathError

    layout = _layout(args)
    try:
        segments = parse_path(args.path or "")
    except PathError as error:
        raise CliError(str(error), exit_code=EXIT_USAGE) from error
    data: Any
    try:
        if args.effective:
            from paseo.config import load_config

            loaded = load_config(layout.config, os.environ, home=layout.root)
            _warn(layout.config, loaded.warnings)
            data = loaded.resolved.to_json()
            if loaded.resolved.daemon.terminalProfiles is None and _covers(
                segments, ("daemon", "terminalProfiles")
            ):
                data["daemon"]["terminalProfiles"] = _offered_terminal_profiles(args)
        else:
            data, warnings = read_document(layout.config)
            _warn(layout.config, warnings)
    except ConfigError as error:
        raise CliError(error.message, exit_code=EXIT_FAILURE) from error
    try:
        value = _shown(args, data, segments)
    except KeyError as error:
        where = "the effective config" if args.effective else str(layout.config)
        raise CliError(f"{args.path}: not set in {where}", exit_code=EXIT_FAILURE) from error
    _emit_value(args, value, args.path or "")
    return 0


def _covers(segments: tuple[str | int, ...], path: tuple[str, ...]) -> bool:
    """Whether the value at ``segments`` is, holds or lies inside the one at ``path``."""
    shared = min(len(segments), len(path))
    return segments[:shared] == path[:shared]


def _offered_terminal_profiles(args: argparse.Namespace) -> list[dict[str, Any]]:
    """What an absent ``daemon.terminalProfiles`` means: each installed provider's profile."""
    from paseo.cli.context import plugin_manager

    offered = (
        provider.terminal_profile()
        for provider in plugin_manager(getattr(args, "home", None)).providers().values()
    )
    return [profile.model_dump(mode="json") for profile in offered if profile is not None]


def _run_set(args: argparse.Namespace) -> int:
    from paseo.config import ConfigError, parse_path, set_path

    layout = _layout(args)
    # The only config command allowed to create the state root (0700).
    layout.create_root()
    try:
        result = set_path(layout.config, args.path, args.value, literal=args.string)
    except ConfigError as error:
        raise CliError(error.message, exit_code=EXIT_FAILURE) from error
    _warn(layout.config, result.warnings)
    try:
        value = _shown(args, result.document, parse_path(args.path))
    except KeyError:
        value = None  # removed with null
    emit(args, {"path": args.path, "value": value})
    return 0


def _run_validate(args: argparse.Namespace) -> int:
    from paseo.config import validate_file

    file = Path(args.file) if args.file else _layout(args).config
    if args.file and not file.is_file():
        raise CliError(f"{file}: no such file", exit_code=EXIT_FAILURE)
    problems = validate_file(file, os.environ)
    errors = [problem for problem in problems if problem.severity == "error"]
    rows = [problem.to_json() for problem in problems]
    if getattr(args, "output", "table") in ("json", "yaml"):
        emit(
            args,
            {"file": str(file), "exists": file.exists(), "valid": not errors, "problems": rows},
        )
    elif not getattr(args, "quiet", False):
        if rows:
            emit(
                args,
                rows,
                columns=[("severity", "SEVERITY"), ("path", "PATH"), ("message", "MESSAGE")],
            )
        if errors:
            summary = f"{len(errors)} error(s)"
        elif file.exists():
            summary = "valid"
        else:
            summary = "no config file; defaults apply"
        sys.stdout.write(f"{file}: {summary}\n")
    return EXIT_FAILURE if errors else 0


def _scalar_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _flatten(value: Any, prefix: str) -> list[dict[str, str]]:
    """``{path, value}`` rows, one per leaf, for the human-readable table."""
    from paseo.config import format_path, parse_path

    base = parse_path(prefix)
    rows: list[dict[str, str]] = []

    def walk(node: Any, at: tuple[str | int, ...]) -> None:
        if isinstance(node, dict) and node:
            for key, child in node.items():
                walk(child, (*at, key))
        elif isinstance(node, list) and node:
            for index, child in enumerate(node):
                walk(child, (*at, index))
        else:
            rows.append({"path": format_path(at), "value": _scalar_text(node)})

    walk(value, base)
    return rows


def _emit_value(args: argparse.Namespace, value: Any, path: str) -> None:
    if getattr(args, "output", "table") in ("json", "yaml"):
        emit(args, value)
    elif isinstance(value, dict | list):
        emit(args, _flatten(value, path), columns=[("path", "PATH"), ("value", "VALUE")])
    else:
        emit(args, _scalar_text(value))
