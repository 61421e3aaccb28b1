"""``paseo project …``: the daemon's project registry.

Also home of :func:`call_daemon`, the one-call client helper the ``workspace``, ``worktree``
and ``label`` commands share.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from typing import Any

from paseo.cli.errors import CliError
from paseo.cli.files import read_named_file
from paseo.cli.output import emit

PROJECT_COLUMNS = [
    ("projectId", "ID"),
    ("name", "NAME"),
    ("kind", "KIND"),
    ("rootPath", "ROOT"),
    ("archived", "ARCHIVED"),
]


def call_daemon(args: argparse.Namespace, method: str, params: dict[str, Any] | None = None) -> Any:
    """Call ``method`` on this home's daemon and return the raw result.

    A daemon that is not running surfaces as the client's ``daemon_not_running`` error, whose
    message says to start it with ``paseo daemon start``."""
    from paseo.cli.context import home_layout
    from paseo.client.light import LightClient

    with LightClient(getattr(args, "host", None), home=home_layout(args).root) as client:
        return client.call(method, params or {}, timeout=getattr(args, "timeout", None))


def absolute(path: str) -> str:
    """A path argument made absolute against the CLI's working directory (lexically)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def project_row(project: dict[str, Any]) -> dict[str, Any]:
    return {
        **project,
        "name": project.get("customName") or project.get("displayName"),
        "archived": project.get("archivedAt") is not None,
    }


def _host(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="daemon address (default: this home's)")


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    add = subs.add_parser("add", help="open a directory as a project (idempotent)")
    add.add_argument("path", help="the project's root directory")
    add.add_argument("--name", help="custom name")
    add.set_defaults(run=run_add)

    ls = subs.add_parser("ls", help="list projects")
    ls.add_argument("-a", "--all", action="store_true", help="include archived projects")
    ls.set_defaults(run=run_ls)

    rename = subs.add_parser("rename", help="set or clear a project's custom name")
    rename.add_argument("project_id", metavar="PROJECT_ID")
    rename.add_argument("name", nargs="?", help="the new name (omit with --clear)")
    rename.add_argument("--clear", action="store_true", help="return to the derived name")
    rename.set_defaults(run=run_rename)

    icon = subs.add_parser("icon", help="set, clear or show a project's icon")
    icon.add_argument("project_id", metavar="PROJECT_ID")
    icon.add_argument("file", nargs="?", help="image to upload (PNG, JPEG, GIF, WebP, SVG)")
    icon.add_argument("--clear", action="store_true", help="back to the automatic icon")
    icon.add_argument("--save", metavar="FILE", help="write the current icon's bytes to FILE")
    icon.set_defaults(run=run_icon)

    archive = subs.add_parser("archive", help="archive a project")
    archive.add_argument("project_id", metavar="PROJECT_ID")
    archive.set_defaults(run=run_archive)

    for sub in (add, ls, rename, icon, archive):
        _host(sub)


def _emit_project(args: argparse.Namespace, project: dict[str, Any]) -> None:
    emit(args, project_row(project) if args.output == "table" else project, id_key="projectId")


def run_add(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"path": absolute(args.path)}
    if args.name:
        params["name"] = args.name
    result = call_daemon(args, "project.add", params)
    _emit_project(args, result["project"])
    if not result["created"] and not args.quiet and args.output == "table":
        sys.stderr.write("paseo: the project already existed\n")
    return 0


def run_ls(args: argparse.Namespace) -> int:
    projects = call_daemon(args, "project.list", {"includeArchived": args.all})["projects"]
    rows = [project_row(p) for p in projects] if args.output == "table" else projects
    emit(args, rows, columns=PROJECT_COLUMNS, id_key="projectId")
    return 0


def run_rename(args: argparse.Namespace) -> int:
    if args.clear == (args.name is not None):
        raise CliError("give a new name or --clear (not both)", exit_code=2)
    result = call_daemon(args, "project.rename", {"projectId": args.project_id, "name": args.name})
    _emit_project(args, result["project"])
    return 0


MAX_ICON_FILE_BYTES = 1024 * 1024
"""As ``paseo.projects.icons.MAX_ICON_BYTES`` (not imported: the CLI stays light)."""


def run_icon(args: argparse.Namespace) -> int:
    if args.clear and args.file:
        raise CliError("give an image file or --clear (not both)", exit_code=2)
    if args.file:
        # The daemon's own icon limit; a bigger file would only be refused after the upload.
        data = read_named_file(args.file, what="icon", limit=MAX_ICON_FILE_BYTES)
        result = call_daemon(
            args,
            "project.setIcon",
            {"projectId": args.project_id, "data": base64.b64encode(data).decode("ascii")},
        )
        _emit_project(args, result["project"])
        return 0
    if args.clear:
        result = call_daemon(args, "project.clearIcon", {"projectId": args.project_id})
        _emit_project(args, result["project"])
        return 0
    icon = call_daemon(args, "project.icon", {"projectId": args.project_id})
    if args.save and icon.get("data"):
        with open(args.save, "wb") as handle:
            handle.write(base64.b64decode(icon["data"]))
    shown = {k: v for k, v in icon.items() if k != "data"}
    shown["bytes"] = len(base64.b64decode(icon["data"])) if icon.get("data") else 0
    emit(args, shown, id_key="revision")
    return 0


def run_archive(args: argparse.Namespace) -> int:
    result = call_daemon(args, "project.archive", {"projectId": args.project_id})
    _emit_project(args, result["project"])
    return 0
