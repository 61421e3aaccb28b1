"""``paseo script ls | run | start | stop | restart | logs``: a workspace's ``paseo.json`` scripts.

The workspace is the one of ``--cwd`` (default: the current directory). ``run`` asks the
daemon for the script's command, cwd and ``PASEO_*`` environment and runs it here in the
foreground, so its output streams to this terminal and its exit status is the command's.
Services run under the daemon: ``start``/``stop``/``restart`` and ``logs [-f]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

from paseo.cli.output import emit

COLUMNS = [
    ("name", "NAME"),
    ("type", "TYPE"),
    ("status", "STATUS"),
    ("port", "PORT"),
    ("url", "URL"),
]

FOLLOW_INTERVAL = 0.5


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("ls", help="the scripts and services of a workspace")
    ls.set_defaults(run=run_ls)
    run = subs.add_parser("run", help="run a plain script here; exit with its status")
    run.set_defaults(run=run_script)
    start = subs.add_parser("start", help="start a service under the daemon")
    start.set_defaults(run=lambda a: _control(a, "script.start"))
    stop = subs.add_parser("stop", help="stop a service")
    stop.set_defaults(run=lambda a: _control(a, "script.stop"))
    restart = subs.add_parser("restart", help="restart a service")
    restart.set_defaults(run=lambda a: _control(a, "script.restart"))
    logs = subs.add_parser("logs", help="a service's kept output")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new output")
    logs.set_defaults(run=run_logs)
    for sub in (run, start, stop, restart, logs):
        sub.add_argument("name", help="the script's name in paseo.json")
    for sub in (ls, run, start, stop, restart, logs):
        sub.add_argument("--cwd", help="a directory of the workspace (default: .)")
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, **params: Any) -> Any:
    from paseo.cli.commands.project import absolute, call_daemon

    return call_daemon(args, method, {"cwd": absolute(args.cwd or "."), **params})


def run_ls(args: argparse.Namespace) -> int:
    result = _call(args, "script.list")
    emit(args, result["scripts"], columns=COLUMNS, id_key="name")
    return 0


def run_script(args: argparse.Namespace) -> int:
    from paseo.cli.errors import CliError

    spec = _call(args, "script.resolve", name=args.name)
    if spec["script"]["type"] == "service":
        raise CliError(f"{args.name!r} is a service: start it with `paseo script start`")
    try:
        completed = subprocess.run(
            ["/bin/sh", "-c", spec["command"]],
            cwd=spec["cwd"],
            env={**os.environ, **spec["env"]},
            check=False,
        )
    except OSError as exc:
        raise CliError(f"could not run {args.name!r} in {spec['cwd']}: {exc}") from None
    code = completed.returncode
    return code if code >= 0 else 128 - code


def _control(args: argparse.Namespace, method: str) -> int:
    result = _call(args, method, name=args.name)
    emit(args, [result["script"]], columns=COLUMNS, id_key="name")
    return 0


def run_logs(args: argparse.Namespace) -> int:
    since = 0
    while True:
        result = _call(args, "script.logs", name=args.name, since=since)
        sys.stdout.write(result["text"])
        sys.stdout.flush()
        since = result["offset"]
        if not args.follow or result["script"]["status"] not in ("starting", "running"):
            return 0
        time.sleep(FOLLOW_INTERVAL)
