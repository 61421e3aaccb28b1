"""``paseo checkpoints AGENT``, ``paseo diff AGENT [--turn N]`` and ``paseo undo AGENT
[--turn N | --redo]``: what each turn of an agent changed in its git working tree, and taking it
back (see docs/checkpoints.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.commands._agentcli import add_host
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit

COLUMNS = [
    ("turn", "TURN"),
    ("startedAt", "STARTED"),
    ("endedAt", "ENDED"),
    ("outcome", "OUTCOME"),
    ("filesChanged", "FILES"),
]

EXIT_CONFLICTS = 1
"""``paseo undo`` when some paths were left alone because they changed since."""


def _call(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


def _agent(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="AGENT", help="agent id, id prefix or title")
    add_host(parser)


def configure(parser: argparse.ArgumentParser) -> None:
    _agent(parser)
    parser.set_defaults(run=run_list)


def configure_diff(parser: argparse.ArgumentParser) -> None:
    _agent(parser)
    parser.add_argument(
        "--turn", type=int, metavar="N", help="only turn N (default: every ended turn)"
    )
    parser.set_defaults(run=run_diff)


def configure_undo(parser: argparse.ArgumentParser) -> None:
    _agent(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--turn", type=int, metavar="N", help="undo turn N (default: the last)")
    which.add_argument("--redo", action="store_true", help="take the last undo back")
    parser.set_defaults(run=run_undo)


def _positive(turn: int | None) -> int | None:
    if turn is not None and turn < 1:
        raise CliError(f"--turn must be 1 or more, not {turn}", exit_code=EXIT_USAGE)
    return turn


def run_list(args: argparse.Namespace) -> int:
    result = _call(args, "checkpoint.list", {"agentId": args.agent})
    if args.output != "table" or args.quiet:
        emit(args, result if args.output != "table" else result["turns"], id_key="turn")
        return 0
    short = result["agentId"][:8]
    if result["turns"]:
        emit(args, result["turns"], columns=COLUMNS)
    if result.get("reason"):
        sys.stdout.write(f"agent {short}: {result['reason']}\n")
    for undo in result["undos"]:
        sys.stdout.write(
            f"undone: turn {undo['turn']} ({len(undo['paths'])} file(s)); "
            f"`paseo undo {short} --redo` takes the last undo back\n"
        )
    return 0


def run_diff(args: argparse.Namespace) -> int:
    params = {"agentId": args.agent, "turn": _positive(args.turn)}
    result = _call(args, "checkpoint.diff", params)
    if args.output != "table":
        emit(args, result)
        return 0
    several = len(result["turns"]) > 1
    for patch in result["turns"]:
        if several:
            # `git apply` and `patch` skip such lines between file sections.
            sys.stdout.write(f"# turn {patch['turn']}\n")
        sys.stdout.write(patch["diff"])
        if not patch["diff"]:
            sys.stderr.write(f"turn {patch['turn']} changed no file\n")
    if not result["turns"]:
        sys.stderr.write("no turn has ended yet: nothing to diff\n")
    return 0


def run_undo(args: argparse.Namespace) -> int:
    if args.redo:
        result = _call(args, "checkpoint.redo", {"agentId": args.agent})
    else:
        params = {"agentId": args.agent, "turn": _positive(args.turn)}
        result = _call(args, "checkpoint.undo", params)
    if args.output != "table":
        emit(args, result)
    else:
        verb = "redid" if args.redo else "undid"
        restored = result["restored"]
        sys.stdout.write(f"{verb} turn {result['turn']}: {len(restored)} file(s) restored\n")
        for path in restored:
            sys.stdout.write(f"  {path}\n")
        if result["unchanged"] and not restored:
            sys.stdout.write("nothing to restore: those files are already so\n")
    for path in result["conflicts"]:
        sys.stderr.write(f"conflict: {path} changed since; left as it is\n")
    return EXIT_CONFLICTS if result["conflicts"] else 0
