"""``paseo workspace …``: workspaces (the exact directories work happens in)."""

from __future__ import annotations

import argparse
from typing import Any

from paseo.cli.errors import CliError
from paseo.cli.output import emit

WORKSPACE_COLUMNS = [
    ("workspaceId", "ID"),
    ("name", "NAME"),
    ("kind", "KIND"),
    ("branch", "BRANCH"),
    ("labels", "LABELS"),
    ("pinned", "PINNED"),
    ("cwd", "CWD"),
]


def workspace_row(workspace: dict[str, Any]) -> dict[str, Any]:
    return {
        **workspace,
        "name": workspace.get("title") or workspace.get("displayName"),
        "pinned": workspace.get("pinnedAt") is not None,
        "archived": workspace.get("archivedAt") is not None,
    }


def emit_workspace(args: argparse.Namespace, workspace: dict[str, Any]) -> None:
    emit(
        args,
        workspace_row(workspace) if args.output == "table" else workspace,
        id_key="workspaceId",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    ls = subs.add_parser("ls", help="list workspaces")
    ls.add_argument("--project", help="only this project's workspaces")
    ls.add_argument("-a", "--all", action="store_true", help="include archived workspaces")
    ls.set_defaults(run=run_ls)

    open_ = subs.add_parser("open", help="the workspace of a directory (created when missing)")
    open_.add_argument("path", nargs="?", default=".", help="directory (default: .)")
    open_.add_argument("--project", help="put it in this project")
    open_.add_argument("--title", help="title")
    open_.set_defaults(run=run_open)

    archive = subs.add_parser("archive", help="archive (a worktree is torn down and removed)")
    archive.add_argument("workspace_id", metavar="WORKSPACE_ID")
    archive.add_argument("--force", action="store_true", help="even with uncommitted work")
    archive.set_defaults(run=run_archive)

    restore = subs.add_parser("restore", help="unarchive (recreating a worktree checkout)")
    restore.add_argument("workspace_id", metavar="WORKSPACE_ID")
    restore.add_argument("--no-setup", action="store_true", help="skip paseo.json setup")
    restore.set_defaults(run=run_restore)

    pin = subs.add_parser("pin", help="pin a workspace to the top (or --unpin)")
    pin.add_argument("workspace_id", metavar="WORKSPACE_ID")
    pin.add_argument("--unpin", action="store_true")
    pin.set_defaults(run=run_pin)

    rename = subs.add_parser("rename", help="set or clear a workspace title")
    rename.add_argument("workspace_id", metavar="WORKSPACE_ID")
    rename.add_argument("title", nargs="?")
    rename.add_argument("--clear", action="store_true", help="back to the derived name")
    rename.set_defaults(run=run_rename)

    label = subs.add_parser("label", help="add or remove catalog labels")
    label.add_argument("workspace_id", metavar="WORKSPACE_ID")
    label.add_argument("--add", action="append", default=[], metavar="NAME")
    label.add_argument("--remove", action="append", default=[], metavar="NAME")
    label.set_defaults(run=run_label)

    for sub in (ls, open_, archive, restore, pin, rename, label):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


def run_ls(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"includeArchived": args.all}
    if args.project:
        params["projectId"] = args.project
    rows = _call(args, "workspace.list", params)["workspaces"]
    if args.output == "table":
        rows = [workspace_row(w) for w in rows]
    emit(args, rows, columns=WORKSPACE_COLUMNS, id_key="workspaceId")
    return 0


def run_open(args: argparse.Namespace) -> int:
    from paseo.cli.commands.project import absolute

    params: dict[str, Any] = {"path": absolute(args.path)}
    if args.project:
        params["projectId"] = args.project
    if args.title:
        params["title"] = args.title
    emit_workspace(args, _call(args, "workspace.open", params)["workspace"])
    return 0


def run_archive(args: argparse.Namespace) -> int:
    result = _call(
        args, "workspace.archive", {"workspaceId": args.workspace_id, "force": args.force}
    )
    if args.output != "table" or args.quiet:
        emit(args, result, id_key="workspaceId")
        return 0
    emit_workspace(args, result["workspace"])
    return 0


def run_restore(args: argparse.Namespace) -> int:
    result = _call(
        args, "workspace.restore", {"workspaceId": args.workspace_id, "runSetup": not args.no_setup}
    )
    emit_workspace(args, result["workspace"])
    return 0


def run_pin(args: argparse.Namespace) -> int:
    result = _call(
        args, "workspace.pin", {"workspaceId": args.workspace_id, "pinned": not args.unpin}
    )
    emit_workspace(args, result["workspace"])
    return 0


def run_rename(args: argparse.Namespace) -> int:
    if args.clear == (args.title is not None):
        raise CliError("give a title or --clear (not both)", exit_code=2)
    result = _call(
        args, "workspace.rename", {"workspaceId": args.workspace_id, "title": args.title}
    )
    emit_workspace(args, result["workspace"])
    return 0


def run_label(args: argparse.Namespace) -> int:
    if not args.add and not args.remove:
        raise CliError("give --add NAME and/or --remove NAME", exit_code=2)
    result: Any = None
    if args.add:
        result = _call(args, "label.assign", {"workspaceId": args.workspace_id, "names": args.add})
    if args.remove:
        result = _call(
            args, "label.unassign", {"workspaceId": args.workspace_id, "names": args.remove}
        )
    emit_workspace(args, result["workspace"])
    return 0
