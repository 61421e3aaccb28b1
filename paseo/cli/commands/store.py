"""``paseo store …``: durable state across store drivers."""

from __future__ import annotations

import argparse
import asyncio
import sys
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
