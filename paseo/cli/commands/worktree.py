"""``paseo worktree …``: Paseo-owned Git worktrees.

``create`` streams ``paseo.json`` setup output to stderr while it runs (table output only).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.errors import CliError
from paseo.cli.output import emit

WORKTREE_COLUMNS = [
    ("workspaceId", "WORKSPACE"),
    ("branch", "BRANCH"),
    ("phase", "PHASE"),
    ("archived", "ARCHIVED"),
    ("path", "PATH"),
]


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    create = subs.add_parser("create", help="create a worktree and its workspace")
    where = create.add_mutually_exclusive_group()
    where.add_argument("--project", help="project id (default: the project of --cwd)")
    where.add_argument("--cwd", default=None, help="a directory inside the project (default: .)")
    mode = create.add_mutually_exclusive_group()
    mode.add_argument("--checkout", metavar="BRANCH", help="check out an existing branch")
    mode.add_argument("--pr", type=int, metavar="N", help="check out change request N")
    create.add_argument("--branch", help="new branch name (generated when absent)")
    create.add_argument(
        "--prompt",
        metavar="TEXT",
        help="what the work is about: names the new branch when --branch is absent",
    )
    create.add_argument("--base", help="base to branch off (default: the default branch)")
    create.add_argument("--remote", default="origin", help="remote for --pr/--checkout")
    create.add_argument(
        "--head-repository",
        metavar="OWNER/NAME",
        help="with --pr: the fork it comes from; nothing of its paseo.json runs until "
        "`paseo worktree trust`",
    )
    create.add_argument("--slug", help="directory name (default: from the branch)")
    create.add_argument("--title", help="workspace title")
    create.add_argument("--no-setup", action="store_true", help="skip paseo.json setup")
    create.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds to wait (default 1800)"
    )
    create.set_defaults(run=run_create)

    ls = subs.add_parser("ls", help="list managed worktrees")
    ls.add_argument("--project", help="only this project's worktrees")
    ls.set_defaults(run=run_ls)

    archive = subs.add_parser("archive", help="teardown, then remove checkout and branch")
    archive.add_argument("workspace_id", metavar="WORKSPACE_ID")
    archive.add_argument("--force", action="store_true", help="even with uncommitted work")
    archive.set_defaults(run=run_archive)

    restore = subs.add_parser("restore", help="recreate an archived worktree")
    restore.add_argument("workspace_id", metavar="WORKSPACE_ID")
    restore.add_argument("--no-setup", action="store_true", help="skip paseo.json setup")
    restore.set_defaults(run=run_restore)

    trust = subs.add_parser("trust", help="let a fork's worktree run its paseo.json setup")
    trust.add_argument("workspace_id", metavar="WORKSPACE_ID")
    trust.add_argument("--no-setup", action="store_true", help="trust without running setup")
    trust.set_defaults(run=run_trust)

    for sub in (create, ls, archive, restore, trust):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


def _create_params(args: argparse.Namespace) -> dict[str, Any]:
    from paseo.cli.commands.project import absolute

    params: dict[str, Any] = {"remote": args.remote, "runSetup": not args.no_setup}
    if args.project:
        params["projectId"] = args.project
    else:
        params["cwd"] = absolute(args.cwd or ".")
    if args.checkout:
        if args.branch:
            raise CliError("--checkout names the branch; drop --branch", exit_code=2)
        params.update(mode="checkout-branch", branch=args.checkout)
    elif args.pr is not None:
        params.update(mode="change-request", changeRequest=args.pr)
        if args.head_repository:
            params["headRepository"] = args.head_repository
        if args.branch:
            params["branch"] = args.branch
    else:
        params["mode"] = "branch-off"
        if args.branch:
            params["branch"] = args.branch
    for key in ("base", "slug", "title", "prompt"):
        value = getattr(args, key)
        if value:
            params[key] = value
    return params


def run_create(args: argparse.Namespace) -> int:
    from paseo.cli.context import home_layout
    from paseo.client.sync import SyncClient

    params = _create_params(args)
    stream_output = args.output == "table" and not args.quiet

    def progress(method: str, payload: dict[str, Any]) -> None:
        event = payload.get("event") or {}
        if event.get("type") == "command_started":
            sys.stderr.write(f"$ {event.get('command')}\n")
        elif event.get("type") == "output":
            sys.stderr.write(str(event.get("chunk", "")))
        sys.stderr.flush()

    with SyncClient(
        args.host, home=home_layout(args).root, client_type="cli", reconnect=False
    ) as client:
        if stream_output:
            client.on("worktree.progress", progress)
            client.subscribe(["workspaces"])
        result = client.call("worktree.create", params, timeout=args.timeout)
    if args.output != "table" or args.quiet:
        emit(args, result if not args.quiet else result["workspace"], id_key="workspaceId")
        return 0
    worktree = result["worktree"]
    emit(
        args,
        {
            "workspaceId": result["workspace"]["workspaceId"],
            "branch": worktree["branch"],
            "path": worktree["path"],
            "cwd": result["workspace"]["cwd"],
            "reused": result["reused"],
        },
        id_key="workspaceId",
    )
    return 0


def run_ls(args: argparse.Namespace) -> int:
    params = {"projectId": args.project} if args.project else {}
    rows = _call(args, "worktree.list", params)["worktrees"]
    emit(args, rows, columns=WORKTREE_COLUMNS, id_key="workspaceId")
    return 0


def run_archive(args: argparse.Namespace) -> int:
    result = _call(
        args, "worktree.archive", {"workspaceId": args.workspace_id, "force": args.force}
    )
    if args.output != "table" or args.quiet:
        emit(args, result if not args.quiet else result["workspace"], id_key="workspaceId")
        return 0
    emit(
        args,
        {
            "workspaceId": result["workspace"]["workspaceId"],
            "removedCheckout": result["removedCheckout"],
            "branchDeleted": result["branchDeleted"],
            "stillReferencedBy": result["stillReferencedBy"],
        },
        id_key="workspaceId",
    )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    result = _call(
        args, "worktree.restore", {"workspaceId": args.workspace_id, "runSetup": not args.no_setup}
    )
    emit(args, result["workspace"], id_key="workspaceId")
    return 0


def run_trust(args: argparse.Namespace) -> int:
    result = _call(
        args, "worktree.trust", {"workspaceId": args.workspace_id, "runSetup": not args.no_setup}
    )
    emit(args, result if args.output != "table" else result["workspace"], id_key="workspaceId")
    return 0
