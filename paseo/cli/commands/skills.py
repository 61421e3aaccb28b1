"""``paseo skills ls | sync``: Paseo's orchestration skills in this user's skill directories.

Which skills are wanted is ``agents.skills.selection`` in config.json (missing: all of them;
``{"mode": "custom", "skills": [...]}``: those). The daemon installs them when it starts;
``sync`` converges again, for example after editing the selection and ``paseo daemon restart``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.output import emit

COLUMNS = [
    ("name", "NAME"),
    ("selected", "SELECTED"),
    ("agents", "~/.agents"),
    ("claude", "~/.claude"),
    ("codex", "~/.codex"),
]


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("ls", help="the skills and what each skill directory holds")
    ls.set_defaults(run=run_ls)
    sync = subs.add_parser(
        "sync", help="install the selected skills, retire the rest, keep your edits"
    )
    sync.set_defaults(run=run_sync)
    for sub in (ls, sync):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method)


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": s["name"], "selected": s["selected"], **s["targets"]} for s in result["skills"]
    ]


def _warn_unknown(result: dict[str, Any]) -> None:
    for name in result.get("unknown") or []:
        sys.stderr.write(f"agents.skills.selection names {name!r}, which Paseo does not ship\n")


def run_ls(args: argparse.Namespace) -> int:
    result = _call(args, "skills.list")
    _warn_unknown(result)
    if getattr(args, "output", "table") in ("json", "yaml"):
        emit(args, result["skills"], id_key="name")
    else:
        emit(args, _rows(result), columns=COLUMNS, id_key="name")
    return 0


def run_sync(args: argparse.Namespace) -> int:
    result = _call(args, "skills.sync")
    _warn_unknown(result)
    if getattr(args, "output", "table") in ("json", "yaml"):
        emit(args, result, id_key="name")
        return 0
    actions = result["actions"]
    if actions:
        emit(
            args,
            actions,
            columns=[("action", "ACTION"), ("skill", "SKILL"), ("path", "PATH")],
            id_key="path",
        )
    elif not getattr(args, "quiet", False):
        sys.stdout.write("skills are up to date\n")
    return 0
