"""``paseo store …``: durable state across store drivers."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from paseo.cli.context import home_layout
from paseo.cli.errors import CliError
from paseo.cli.output import emit

if TYPE_CHECKING:
    from paseo.storage.migrate import MigrationReport

COLUMNS = (
    ("kind", "KIND"),
    ("source", "SOURCE"),
    ("target", "TARGET"),
    ("verified", "VERIFIED"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    migrate = subs.add_parser(
        "migrate",
        help="copy every record to another store driver and verify the copy",
        description=(
            "Copy agents, timelines, schedules, projects, workspaces, labels, push tokens, "
            "managed processes and plugin sources from one store driver to another, then "
            "compare both stores record by record. The daemon must be stopped. config.json "
            "is changed only with --switch."
        ),
    )
    migrate.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="DRIVER",
        help="the driver holding the records now (e.g. json)",
    )
    migrate.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="DRIVER",
        help="the driver to copy them into (e.g. sqlite)",
    )
    migrate.add_argument(
        "--force", action="store_true", help="delete the records the target already holds first"
    )
    migrate.add_argument(
        "--switch",
        action="store_true",
        help="after a verified copy, set storage.driver in config.json",
    )
    migrate.set_defaults(run=run_migrate)
    _configure_quarantine(subs)


QUARANTINE_COLUMNS = (
    ("quarantinedAt", "QUARANTINED"),
    ("original", "ORIGINAL"),
    ("path", "PATH"),
    ("size", "BYTES"),
)


def _configure_quarantine(subs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subs.add_parser(
        "quarantine",
        help="files the daemon could not load, kept aside: list, restore, remove",
        description=(
            "A file the daemon could not use (a corrupt record, a malformed server-id, an "
            "unreadable keypair) is moved to $PASEO_HOME/quarantine/ instead of being deleted. "
            "Fix a file and restore it with the daemon stopped, or remove it once you no longer "
            "need it."
        ),
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION")
    ls = actions.add_parser("ls", help="list quarantined files")
    ls.set_defaults(run=run_quarantine_ls)
    restore = actions.add_parser(
        "restore", help="move a quarantined file back (daemon stopped)"
    )
    restore.add_argument("path", metavar="PATH", help="the file, as `ls` shows it")
    restore.add_argument("--force", action="store_true", help="replace a file that is there now")
    restore.set_defaults(run=run_quarantine_restore)
    remove = actions.add_parser("rm", help="delete a quarantined file for good")
    remove.add_argument("path", metavar="PATH", help="the file, as `ls` shows it")
    remove.set_defaults(run=run_quarantine_rm)


def run_quarantine_ls(args: argparse.Namespace) -> int:
    from paseo.home.quarantine import list_quarantine

    layout = home_layout(args)
    rows = [
        {
            "quarantinedAt": entry.quarantinedAt,
            "original": str(entry.original),
            "path": str(entry.path),
            "size": entry.size,
        }
        for entry in list_quarantine(layout.root)
    ]
    emit(args, rows, columns=QUARANTINE_COLUMNS, id_key="path")
    return 0


def _quarantined(args: argparse.Namespace) -> Path:
    from paseo.home.quarantine import QUARANTINE_DIR

    layout = home_layout(args)
    path = Path(os.path.abspath(args.path))
    if not path.is_relative_to(layout.root / QUARANTINE_DIR) or not path.is_file():
        raise CliError(
            f"{args.path} is not a quarantined file of {layout.root}; "
            "see `paseo store quarantine ls`",
            exit_code=2,
        )
    return path


def run_quarantine_restore(args: argparse.Namespace) -> int:
    from paseo.client.discovery import daemon_running
    from paseo.home.quarantine import RestoreRefused, restore

    layout = home_layout(args)
    path = _quarantined(args)
    if daemon_running(layout.root):
        raise CliError(
            "the daemon is running: it would not see the restored file until a restart and "
            "could overwrite it; stop it first (`paseo daemon stop`)"
        )
    try:
        original = restore(layout.root, path, force=args.force)
    except RestoreRefused as exc:
        raise CliError(str(exc)) from None
    if not args.quiet:
        sys.stdout.write(f"restored {original}; `paseo daemon start` loads it again\n")
    return 0


def run_quarantine_rm(args: argparse.Namespace) -> int:
    path = _quarantined(args)
    path.unlink()
    if not args.quiet:
        sys.stdout.write(f"removed {path}\n")
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    from paseo.storage.migrate import (
        CopyFailed,
        MigrationRefused,
        VerificationFailed,
        migrate_store,
    )

    layout = home_layout(args)
    try:
        report = asyncio.run(
            migrate_store(
                layout.root, args.source, args.target, force=args.force, switch=args.switch
            )
        )
    except (MigrationRefused, CopyFailed) as exc:
        raise CliError(str(exc)) from exc
    except VerificationFailed as exc:
        _print(args, exc.report)
        bad = ", ".join(k.kind for k in exc.report.kinds if not k.verified)
        raise CliError(
            f"verification failed ({bad}); config.json was not changed. The target keeps the "
            "partial copy: rerun with --force after fixing the cause"
        ) from exc
    _print(args, report)
    return 0


def _print(args: argparse.Namespace, report: MigrationReport) -> None:
    if args.output != "table":
        emit(args, report.to_json())
        return
    emit(args, [kind.to_json() for kind in report.kinds], columns=COLUMNS, id_key="kind")
    if args.quiet:
        return
    verdict = "verified" if report.verified else "NOT verified"
    line = f"copied {report.source} -> {report.target} in {report.home}: {verdict}"
    if report.cleared:
        line += "; the target's previous records were replaced"
    if report.switched:
        line += f"; config.json now selects {report.target!r}"
    elif report.verified:
        line += f"; config.json unchanged (rerun with --switch to select {report.target!r})"
    sys.stdout.write(line + "\n")
