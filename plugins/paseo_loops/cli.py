"""``paseo loop run | ls | inspect | logs | stop``: each one ``loop.*`` call on the running
daemon (the daemon owns the loops; the CLI never reads the store). ``paseo loop schedule``
is one ``schedule.create`` whose target is a ``loop`` (each fire starts the loop).

Flags follow the TypeScript CLI (``--verify-provider``/``--verify-model`` for the verifier;
``--verifier-provider``/``--verifier-model`` are accepted too). Durations take ``ms``, ``s``,
``m``, ``h`` or ``d`` (a bare number is seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from typing import Any

from paseo_hookspecs.cli_client import DaemonCaller

EXIT_FAILED = 1
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(text: str) -> int:
    match = _DURATION.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 500ms, 30s, 10m, 2h)")
    return int(float(match.group(1)) * _UNIT_MS[match.group(2) or "s"])


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="loop_command", metavar="COMMAND", required=True)
    run = commands.add_parser("run", help="start a loop: a fresh worker until the checks pass")
    _loop_flags(run)
    run.set_defaults(run=_run_run)
    schedule = commands.add_parser(
        "schedule", help="start the loop on a cadence (a schedule whose target is the loop)"
    )
    _loop_flags(schedule)
    schedule.add_argument("--cron", metavar="EXPR", help='five-field cron, e.g. "0 9 * * 1-5"')
    schedule.add_argument("--tz", metavar="ZONE", help="IANA time zone of --cron (default UTC)")
    schedule.add_argument("--every", type=duration_ms, help="an interval instead: 30m, 2h")
    schedule.add_argument("--schedule-name", help="a name to refer to the schedule by")
    schedule.add_argument("--max-runs", type=_positive, help="complete after N runs")
    schedule.set_defaults(run=_run_schedule)
    ls = commands.add_parser("ls", help="list loops")
    ls.set_defaults(run=_run_ls)
    inspect = commands.add_parser("inspect", help="a loop with its iterations and check results")
    inspect.add_argument("id", help="a loop's id, id prefix or name")
    inspect.set_defaults(run=_run_inspect)
    logs = commands.add_parser("logs", help="a loop's log")
    logs.add_argument("id", help="a loop's id, id prefix or name")
    logs.add_argument("--after-seq", type=int, default=0, help="only entries after this seq")
    logs.set_defaults(run=_run_logs)
    stop = commands.add_parser("stop", help="stop a running loop")
    stop.add_argument("id", help="a loop's id, id prefix or name")
    stop.set_defaults(run=_run_stop)


def _loop_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a loop (``run`` and ``schedule``), as the TypeScript CLI names them."""
    parser.add_argument("prompt", help="the worker's task")
    parser.add_argument("--name", help="a name to refer to the loop by")
    parser.add_argument("--cwd", help="the directory the agents and checks work in (default: here)")
    parser.add_argument(
        "--worktree",
        metavar="NAME",
        help="work in a Paseo-owned worktree on branch NAME of the --cwd repository (made off "
        "--base or the default branch, with its paseo.json setup; an earlier one is reused)",
    )
    parser.add_argument("--base", metavar="REF", help="with --worktree: the branch to start from")
    parser.add_argument("--provider", help="the worker's provider (or provider/model)")
    parser.add_argument("--model", help="the worker's model")
    parser.add_argument(
        "--verify-provider",
        "--verifier-provider",
        dest="verifier_provider",
        help="the verifier's provider (default: the worker's)",
    )
    parser.add_argument(
        "--verify-model", "--verifier-model", dest="verifier_model", help="the verifier's model"
    )
    parser.add_argument(
        "--verify",
        dest="verify_prompt",
        help="a verifier agent checks the work with this prompt and approves or rejects it",
    )
    parser.add_argument(
        "--verify-check",
        dest="verify_checks",
        action="append",
        default=[],
        metavar="CMD",
        help="a shell command (sh -c, in the cwd) that must exit 0; repeatable",
    )
    parser.add_argument("--archive", action="store_true", help="archive each iteration's agents")
    parser.add_argument("--sleep", type=duration_ms, default=0, help="pause between iterations")
    parser.add_argument("--max-iterations", type=_positive, help="give up after N iterations")
    parser.add_argument("--max-time", type=duration_ms, help="give up after this long")


def _caller(args: argparse.Namespace) -> DaemonCaller:
    from paseo_hookspecs.cli_client import WebSocketCaller

    return WebSocketCaller(getattr(args, "home", None), client_name="loop")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    from paseo_hookspecs.errors import PaseoError

    try:
        return asyncio.run(_caller(args).call(method, params))
    except PaseoError as exc:
        print(f"paseo loop: {_safe(exc.message, 400)} ({exc.code})", file=sys.stderr)
        return None


def _output(args: argparse.Namespace) -> str:
    return str(getattr(args, "output", "table") or "table")


WORKTREE_TIMEOUT = 600.0
"""Seconds a worktree's creation (with its ``paseo.json`` setup) may take."""


def _worktree_path(args: argparse.Namespace, cwd: str) -> str | None:
    """``--worktree NAME``: the checkout of the Paseo-owned worktree on branch ``NAME`` of
    ``cwd``'s repository, made now or by an earlier request for that name (unless a ``--base``
    is asked for); ``None`` after saying why it could not be had."""
    from paseo_hookspecs.cli_client import WebSocketCaller
    from paseo_hookspecs.errors import Conflict, PaseoError

    caller = WebSocketCaller(
        getattr(args, "home", None), timeout=WORKTREE_TIMEOUT, client_name="loop"
    )
    params: dict[str, Any] = {"cwd": cwd, "mode": "branch-off", "branch": args.worktree}
    if args.base:
        params["base"] = args.base

    async def made() -> str:
        try:
            return str((await caller.call("worktree.create", params))["worktree"]["path"])
        except Conflict as exc:
            worktree_id = exc.data.get("worktreeId")
            if args.base or not worktree_id:
                raise
            for worktree in (await caller.call("worktree.list", {}))["worktrees"]:
                if worktree["id"] == worktree_id and not worktree.get("archived"):
                    return str(worktree["path"])
            raise

    try:
        return asyncio.run(made())
    except PaseoError as exc:
        print(f"paseo loop: --worktree: {_safe(exc.message, 400)} ({exc.code})", file=sys.stderr)
        return None


def _loop_params(args: argparse.Namespace) -> dict[str, Any] | None:
    cwd = os.path.abspath(os.path.expanduser(args.cwd or os.getcwd()))
    if args.base is not None and args.worktree is None:
        print(
            "paseo loop: --base names where a --worktree starts; give --worktree NAME too",
            file=sys.stderr,
        )
        return None
    if args.worktree is not None:
        found = _worktree_path(args, cwd)
        if found is None:
            return None
        cwd = found
    params: dict[str, Any] = {
        "prompt": args.prompt,
        "cwd": cwd,
        "name": args.name,
        "provider": args.provider,
        "model": args.model,
        "verifierProvider": args.verifier_provider,
        "verifierModel": args.verifier_model,
        "verifyPrompt": args.verify_prompt,
        "verifyChecks": args.verify_checks,
        "archive": args.archive,
        "sleepMs": args.sleep,
        "maxIterations": args.max_iterations,
        "maxTimeMs": args.max_time,
    }
    return {k: v for k, v in params.items() if v is not None}


def _run_run(args: argparse.Namespace) -> int:
    params = _loop_params(args)
    answer = None if params is None else _call(args, "loop.run", params)
    if answer is None:
        return EXIT_FAILED
    loop = answer["loop"]
    if _structured(args, loop):
        return 0
    if getattr(args, "quiet", False):
        print(loop["id"])
    else:
        print(f"Loop {loop['id']} ({_safe(loop['name'])}) started in {_safe(loop['cwd'])}")
    return 0


def _run_schedule(args: argparse.Namespace) -> int:
    if (args.cron is None) == (args.every is None):
        print("paseo loop schedule: give --cron EXPR or --every DURATION", file=sys.stderr)
        return 2
    if args.cron is not None:
        cadence: dict[str, Any] = {"type": "cron", "expression": args.cron}
        if args.tz:
            cadence["timezone"] = args.tz
    else:
        cadence = {"type": "every", "everyMs": args.every}
    config = _loop_params(args)
    if config is None:
        return EXIT_FAILED
    prompt = config.pop("prompt")
    params: dict[str, Any] = {
        "prompt": prompt,
        "cadence": cadence,
        "target": {"type": "loop", "config": config},
        "name": args.schedule_name,
        "maxRuns": args.max_runs,
    }
    answer = _call(args, "schedule.create", {k: v for k, v in params.items() if v is not None})
    if answer is None:
        return EXIT_FAILED
    schedule = answer["schedule"]
    if _structured(args, schedule):
        return 0
    if getattr(args, "quiet", False):
        print(schedule["id"])
    else:
        print(f"Schedule {schedule['id']} starts the loop; next run {schedule['nextRunAt']}")
    return 0


def _run_ls(args: argparse.Namespace) -> int:
    answer = _call(args, "loop.list", {})
    if answer is None:
        return EXIT_FAILED
    loops = answer["loops"]
    if _structured(args, loops):
        return 0
    if getattr(args, "quiet", False):
        for loop in loops:
            print(loop["id"])
        return 0
    rows = [
        [
            loop["id"],
            loop["name"],
            loop["status"],
            loop.get("activeIteration") or "-",
            loop["updatedAt"],
            loop["cwd"],
        ]
        for loop in loops
    ]
    header = (
        None
        if getattr(args, "no_headers", False)
        else ["ID", "NAME", "STATUS", "ITERATION", "UPDATED", "CWD"]
    )
    _table(header, rows)
    return 0


def _run_inspect(args: argparse.Namespace) -> int:
    answer = _call(args, "loop.inspect", {"id": args.id})
    if answer is None:
        return EXIT_FAILED
    loop = answer["loop"]
    if _structured(args, loop):
        return 0
    fields = [
        ("Id", loop["id"]),
        ("Name", loop["name"]),
        ("Status", loop["status"]),
        ("Cwd", loop["cwd"]),
        ("Prompt", loop["prompt"]),
        ("Provider", loop["provider"]),
        ("Model", loop.get("model")),
        ("Verify", loop.get("verifyPrompt")),
        ("Checks", ", ".join(loop.get("verifyChecks") or [])),
        ("Max iterations", loop.get("maxIterations")),
        ("Max time (ms)", loop.get("maxTimeMs")),
        ("Sleep (ms)", loop.get("sleepMs")),
        ("Created", loop["createdAt"]),
        ("Completed", loop.get("completedAt")),
    ]
    width = max(len(label) for label, _ in fields)
    for label, value in fields:
        if value not in (None, ""):
            print(f"{label:<{width}}  {_safe(str(value), 400)}")
    print()
    rows = []
    for iteration in loop["iterations"]:
        checks = " ".join(
            f"{'pass' if c['passed'] else 'FAIL'}:{c['command']}" for c in iteration["verifyChecks"]
        )
        verdict = iteration.get("verifyPrompt") or {}
        rows.append(
            [
                iteration["index"],
                iteration["status"],
                iteration.get("workerOutcome") or "-",
                iteration.get("workerAgentId") or "-",
                checks or "-",
                ("approved" if verdict.get("passed") else "rejected") if verdict else "-",
                iteration.get("failureReason") or "",
            ]
        )
    _table(["ITERATION", "STATUS", "WORKER", "WORKER AGENT", "CHECKS", "VERIFIER", "REASON"], rows)
    return 0


def _run_logs(args: argparse.Namespace) -> int:
    answer = _call(args, "loop.logs", {"id": args.id, "afterSeq": args.after_seq})
    if answer is None:
        return EXIT_FAILED
    entries = answer["entries"]
    if _structured(args, entries):
        return 0
    for entry in entries:
        where = f"#{entry['iteration']}" if entry.get("iteration") is not None else "-"
        print(
            f"{entry['seq']:>4} {entry['timestamp']} {where:>4} {entry['source']:<12} "
            f"{entry['level']:<5} {_safe(entry['text'], 2000)}"
        )
    return 0


def _run_stop(args: argparse.Namespace) -> int:
    answer = _call(args, "loop.stop", {"id": args.id})
    if answer is None:
        return EXIT_FAILED
    loop = answer["loop"]
    if _structured(args, loop):
        return 0
    print(f"Loop {loop['id']} {loop['status']}")
    return 0


def _structured(args: argparse.Namespace, value: Any) -> bool:
    output = _output(args)
    if output == "json":
        print(json.dumps(value, indent=2))
        return True
    if output == "yaml":
        import yaml

        print(yaml.safe_dump(value, sort_keys=False, allow_unicode=False), end="")
        return True
    return False


def _safe(text: str, limit: int = 200) -> str:
    """One line of printable characters: prompts, reasons and agents' text never act on the
    terminal."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text[: limit * 4]).strip()
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1].rstrip() + "…"


def _table(header: list[str] | None, rows: list[list[Any]]) -> None:
    cells = [[_safe(str(cell), 120) for cell in row] for row in rows]
    every = ([header] if header else []) + cells
    if not every:
        return
    widths = [max(len(row[i]) for row in every) for i in range(len(every[0]))]
    for row in every:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
