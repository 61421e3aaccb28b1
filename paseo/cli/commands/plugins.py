"""``paseo plugins …``: list plugins and their load status."""

from __future__ import annotations

import argparse

from paseo.cli.output import emit

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


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("list", aliases=["ls"], help="list plugins and their load status")
    ls.add_argument("--all", action="store_true", help="include built-in plugins")
    ls.add_argument("--hook", metavar="NAME", help="only plugins implementing hook NAME")
    ls.set_defaults(run=run_list)


def run_list(args: argparse.Namespace) -> int:
    from paseo.cli.context import plugin_manager

    manager = plugin_manager(args.home)
    rows = [
        r.to_json()
        for r in manager.records
        if (args.all or not r.builtin) and (args.hook is None or args.hook in r.hooks)
    ]
    emit(args, rows, columns=COLUMNS, id_key="name")
    return 0
