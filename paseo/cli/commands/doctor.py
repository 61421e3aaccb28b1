"""``paseo doctor``: check everything Paseo needs and say what to fix (see
:mod:`paseo.doctor`). Exit status 0 when no check fails, 1 otherwise.

The checks are imported by the handler, not here: ``paseo doctor --help`` (and ``paseo
--help``) import no check and no plugin.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from paseo.cli.errors import EXIT_FAILURE
from paseo.cli.output import emit

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Check the providers, the MCP endpoint, the Hub relationship, speech, the listen "
        "address, the home's permissions, config.json, the store and git; each check says "
        "ok, warn or fail, what it found and the exact fix. Works with the daemon stopped "
        "(what can be checked offline) and running (what the daemon can tell, too). Exit "
        "status 0 when nothing fails, 1 otherwise."
    )
    parser.set_defaults(run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from paseo.cli.context import home_layout
    from paseo.doctor.runner import run_checks, summary

    # What the checks find is in the report: the loaders' log records (a plugin that fails to
    # load is logged with its traceback) must not reach the terminal through logging's
    # last-resort handler as well.
    logging.getLogger().addHandler(logging.NullHandler())
    checks = run_checks(home_layout(args), os.environ)
    counts = summary(checks)
    failed = counts["fail"] > 0
    if args.output in ("json", "yaml"):
        emit(
            args,
            {
                "ok": not failed,
                "summary": counts,
                "checks": [check.to_json() for check in checks],
            },
        )
        return EXIT_FAILURE if failed else 0
    if args.quiet:
        for check in checks:
            if check.status == "fail":
                sys.stdout.write(f"{check.group}/{check.name}\n")
        return EXIT_FAILURE if failed else 0
    out = sys.stdout
    group = None
    for check in checks:
        if check.group != group:
            group = check.group
            out.write(f"{group}\n")
        out.write(f"  {_MARK[check.status]} {check.name}: {check.found}\n")
        if check.fix and check.status != "ok":
            out.write(f"       fix: {check.fix}\n")
    out.write(f"{counts['ok']} ok, {counts['warn']} warning(s), {counts['fail']} failure(s)\n")
    return EXIT_FAILURE if failed else 0
