"""``paseo label …``: the host-wide workspace label catalog."""

from __future__ import annotations

import argparse
from typing import Any

from paseo.cli.output import emit

COLORS = ("violet", "sky", "emerald", "orange", "pink", "indigo", "teal", "red", "amber", "blue")


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("ls", help="list the catalog")
    ls.set_defaults(run=run_ls)
    create = subs.add_parser("create", help="add a label")
    create.add_argument("name")
    create.add_argument("--color", choices=COLORS, default="blue")
    create.set_defaults(run=run_create)
    rename = subs.add_parser("rename", help="rename a label (rewrites assignments)")
    rename.add_argument("name")
    rename.add_argument("new_name")
    rename.set_defaults(run=run_rename)
    recolor = subs.add_parser("recolor", help="change a label's colour")
    recolor.add_argument("name")
    recolor.add_argument("color", choices=COLORS)
    recolor.set_defaults(run=run_recolor)
    delete = subs.add_parser("delete", help="delete a label and its assignments")
    delete.add_argument("name")
    delete.set_defaults(run=run_delete)
    for sub in (ls, create, rename, recolor, delete):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any] | None = None) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


def run_ls(args: argparse.Namespace) -> int:
    labels = _call(args, "label.list")["labels"]
    emit(args, labels, columns=[("name", "NAME"), ("color", "COLOR")], id_key="name")
    return 0


def run_create(args: argparse.Namespace) -> int:
    label = _call(args, "label.create", {"name": args.name, "color": args.color})["label"]
    emit(args, label, id_key="name")
    return 0


def run_rename(args: argparse.Namespace) -> int:
    label = _call(args, "label.edit", {"name": args.name, "newName": args.new_name})["label"]
    emit(args, label, id_key="name")
    return 0


def run_recolor(args: argparse.Namespace) -> int:
    label = _call(args, "label.edit", {"name": args.name, "color": args.color})["label"]
    emit(args, label, id_key="name")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    result = _call(args, "label.delete", {"name": args.name})
    emit(args, {"name": args.name, **result}, id_key="name")
    return 0
