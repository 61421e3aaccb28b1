"""``paseo schedule …``: recurring prompts run by the daemon.

Times are shown in the local time zone of the machine running the CLI; ``-o json`` / ``-o
yaml`` print the records as stored (UTC).
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime, timedelta
from typing import Any

from paseo.cli.commands._agentcli import parse_duration
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit

SCHEDULE_COLUMNS = [
    ("id", "ID"),
    ("name", "NAME"),
    ("status", "STATUS"),
    ("cadence", "CADENCE"),
    ("target", "TARGET"),
    ("nextRun", "NEXT RUN"),
    ("runs", "RUNS"),
]
RUN_COLUMNS = [
    ("id", "RUN"),
    ("scheduledFor", "SCHEDULED"),
    ("status", "STATUS"),
    ("duration", "TOOK"),
    ("agent", "AGENT"),
    ("result", "OUTPUT / ERROR"),
]
RESULT_WIDTH = 60


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    create = subs.add_parser("create", help="create a schedule")
    create.add_argument("prompt", metavar="PROMPT", help="what to send each run")
    create.add_argument("--cron", metavar="EXPR", help='five-field cron, e.g. "0 9 * * 1-5"')
    create.add_argument("--tz", metavar="ZONE", help="IANA time zone of --cron (default UTC)")
    create.add_argument("--every", metavar="DURATION", help="legacy interval: 30s, 5m, 1h")
    create.add_argument("--name", help="a name to refer to the schedule by")
    create.add_argument(
        "--target",
        metavar="self|new-agent|AGENT",
        help="who runs it (default: self inside an agent, else a new agent in --cwd)",
    )
    create.add_argument(
        "--profile", metavar="NAME", help="agent profile of a new agent (daemon.agentProfiles)"
    )
    create.add_argument(
        "--provider", help="provider of a new agent (default: the profile's, else first ready)"
    )
    create.add_argument("--model", help="model of a new agent")
    create.add_argument("--mode", help="mode of a new agent")
    create.add_argument("--cwd", help="directory of a new agent (default: here)")
    create.add_argument(
        "--budget-tokens", type=int, metavar="N", help="token budget of each new agent"
    )
    create.add_argument(
        "--budget-usd", type=float, metavar="X", help="USD budget of each new agent"
    )
    create.add_argument("--max-runs", type=int, metavar="N", help="complete after N runs")
    create.add_argument("--expires-in", metavar="DURATION", help="complete after this long")
    create.set_defaults(run=run_create)

    ls = subs.add_parser("ls", help="list schedules")
    ls.add_argument("--status", choices=("active", "paused", "completed"))
    ls.set_defaults(run=run_ls)

    inspect = subs.add_parser("inspect", help="everything about one schedule")
    logs = subs.add_parser("logs", help="a schedule's runs, oldest first")
    logs.add_argument("--limit", type=int, default=20, help="newest N runs (default 20)")
    pause = subs.add_parser("pause", help="stop firing until resumed")
    resume = subs.add_parser("resume", help="fire again from the next slot")
    delete = subs.add_parser("delete", help="delete a schedule and its history")
    run = subs.add_parser("run", help="start a run now")
    for sub, handler in (
        (inspect, run_inspect),
        (logs, run_logs),
        (pause, run_pause),
        (resume, run_resume),
        (delete, run_delete),
        (run, run_now),
    ):
        sub.add_argument("schedule", metavar="SCHEDULE", help="id, id prefix or name")
        sub.set_defaults(run=handler)
    for sub in (create, ls, inspect, logs, pause, resume, delete, run):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any] | None = None) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


def _duration(option: str, text: str) -> float:
    """``30s``, ``5m``, ``1h30m`` and, for the longer spans schedules have, ``7d`` / ``1d12h``."""
    if text.strip().startswith("-"):
        raise CliError(f"{option} must be a positive duration, got {text!r}", exit_code=EXIT_USAGE)
    days, sep, rest = text.strip().lower().partition("d")
    try:
        if sep and days.isdigit():
            seconds = int(days) * 86400.0 + (parse_duration(rest) if rest else 0.0)
        else:
            seconds = parse_duration(text)
    except argparse.ArgumentTypeError as exc:
        raise CliError(
            f"{option}: not a duration: {text!r} (e.g. 30s, 5m, 1h, 7d)", exit_code=EXIT_USAGE
        ) from exc
    if seconds <= 0:
        raise CliError(f"{option} must be a positive duration, got {text!r}", exit_code=EXIT_USAGE)
    number = text.strip()
    if number.replace(".", "", 1).isdigit():
        # `--every 5` once meant 5 seconds, and each run started an agent: say the unit.
        raise CliError(
            f"{option} {number} has no unit: say {number}s, {number}m, {number}h or {number}d",
            exit_code=EXIT_USAGE,
        )
    return seconds


def cadence_params(args: argparse.Namespace) -> dict[str, Any]:
    if args.cron is not None and args.every is not None:
        raise CliError("give --cron EXPR or --every DURATION, not both", exit_code=EXIT_USAGE)
    if args.cron is None and args.every is None:
        raise CliError("a schedule needs --cron EXPR or --every DURATION", exit_code=EXIT_USAGE)
    if args.every is not None:
        if args.tz is not None:
            raise CliError("--tz applies to --cron only", exit_code=EXIT_USAGE)
        return {"type": "every", "everyMs": round(_duration("--every", args.every) * 1000)}
    cadence: dict[str, Any] = {"type": "cron", "expression": args.cron}
    if args.tz is not None:
        cadence["timezone"] = args.tz
    return cadence


def target_params(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """``--target``: ``self`` is ``$PASEO_AGENT_ID``; absent means self inside an agent and a
    new agent in ``--cwd`` elsewhere."""
    from paseo.cli.commands.project import absolute

    target = args.target
    if target is None:
        target = "self" if env.get("PASEO_AGENT_ID") else "new-agent"
    if target != "new-agent":
        extra = [flag for flag, value in _new_agent_flags(args) if value is not None]
        if extra:
            raise CliError(f"{', '.join(extra)} apply to a new-agent target", exit_code=EXIT_USAGE)
    if target == "self":
        agent_id = env.get("PASEO_AGENT_ID")
        if not agent_id:
            raise CliError(
                "--target self needs $PASEO_AGENT_ID (it is set inside an agent)",
                exit_code=EXIT_USAGE,
            )
        return {"type": "agent", "agentId": agent_id}
    if target != "new-agent":
        return {"type": "agent", "agentId": target}
    config: dict[str, Any] = {"cwd": absolute(args.cwd or ".")}
    for key, value in (
        ("profile", args.profile),
        ("provider", args.provider),
        ("model", args.model),
        ("modeId", args.mode),
    ):
        if value is not None:
            config[key] = value
    from paseo.cli.commands.run import budget_param

    budget = budget_param(args.budget_tokens, args.budget_usd)
    if budget is not None:
        config["budget"] = budget
    return {"type": "new-agent", "config": config}


def _new_agent_flags(args: argparse.Namespace) -> list[tuple[str, Any]]:
    return [
        ("--profile", args.profile),
        ("--provider", args.provider),
        ("--model", args.model),
        ("--mode", args.mode),
        ("--cwd", args.cwd),
        ("--budget-tokens", getattr(args, "budget_tokens", None)),
        ("--budget-usd", getattr(args, "budget_usd", None)),
    ]


def create_params(
    args: argparse.Namespace, env: dict[str, str], now: datetime | None = None
) -> dict[str, Any]:
    """The ``schedule.create`` params of a ``paseo schedule create`` command line."""
    params: dict[str, Any] = {
        "prompt": args.prompt,
        "cadence": cadence_params(args),
        "target": target_params(args, env),
    }
    if args.name:
        params["name"] = args.name
    if args.max_runs is not None:
        if args.max_runs < 1:
            raise CliError(f"--max-runs must be at least 1, got {args.max_runs}", exit_code=2)
        params["maxRuns"] = args.max_runs
    if args.expires_in is not None:
        seconds = _duration("--expires-in", args.expires_in)
        moment = (now or datetime.now(UTC)) + timedelta(seconds=seconds)
        params["expiresAt"] = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return params


# --------------------------------------------------------------------------- rendering


def local_time(value: str | None) -> str | None:
    """A stored UTC timestamp in this machine's local time zone."""
    if not value:
        return None
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def describe_cadence(cadence: dict[str, Any]) -> str:
    if cadence.get("type") == "every":
        return f"every {_human(float(cadence['everyMs']) / 1000)}"
    zone = cadence.get("timezone") or "UTC"
    return f"cron {cadence.get('expression')} ({zone})"


def describe_target(target: dict[str, Any]) -> str:
    if target.get("type") == "agent":
        return f"agent {str(target.get('agentId'))[:8]}"
    if target.get("type") != "new-agent":  # a plugin's target (the loops plugin's `loop`)
        return f"{target.get('type')} in {target.get('config', {}).get('cwd', '?')}"
    return f"new {target.get('config', {}).get('provider')} agent"


def _human(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def schedule_row(schedule: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": schedule["id"],
        "name": schedule.get("name"),
        "status": schedule.get("status"),
        "cadence": describe_cadence(schedule.get("cadence") or {}),
        "target": describe_target(schedule.get("target") or {}),
        "nextRun": local_time(schedule.get("nextRunAt")),
        "runs": len(schedule.get("runs") or []),
    }


def run_row(run: dict[str, Any]) -> dict[str, Any]:
    took = None
    if run.get("endedAt"):
        start = datetime.fromisoformat(str(run["startedAt"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(run["endedAt"]).replace("Z", "+00:00"))
        took = f"{(end - start).total_seconds():.1f}s"
    text = run.get("error") if run.get("status") == "failed" else run.get("output")
    line = " ".join(str(text or "").split())
    if len(line) > RESULT_WIDTH:
        line = line[: RESULT_WIDTH - 1] + "…"
    return {
        "id": run["id"],
        "scheduledFor": local_time(run.get("scheduledFor")),
        "status": run.get("status"),
        "duration": took,
        "agent": str(run["agentId"])[:8] if run.get("agentId") else None,
        "result": line or None,
    }


def _emit_schedule(args: argparse.Namespace, schedule: dict[str, Any]) -> None:
    if args.output != "table" or args.quiet:
        emit(args, schedule)
        return
    row = schedule_row(schedule)
    row.pop("runs")
    detail = {
        **row,
        "prompt": schedule.get("prompt"),
        "lastRun": local_time(schedule.get("lastRunAt")),
        "pausedAt": local_time(schedule.get("pausedAt")),
        # Why the daemon paused it (its target agent was deleted), when it did.
        "pausedReason": schedule.get("pausedReason"),
        "expires": local_time(schedule.get("expiresAt")),
        "maxRuns": schedule.get("maxRuns"),
        "runs": len(schedule.get("runs") or []),
    }
    emit(args, detail)


# --------------------------------------------------------------------------- commands


def run_create(args: argparse.Namespace) -> int:
    params = create_params(args, dict(os.environ))
    _emit_schedule(args, _call(args, "schedule.create", params)["schedule"])
    return 0


def run_ls(args: argparse.Namespace) -> int:
    import sys

    result = _call(args, "schedule.list", {"status": args.status} if args.status else {})
    for item in result.get("quarantined") or []:
        sys.stderr.write(
            f"paseo: warning: schedule file {item['path']} was invalid and moved to "
            f"{item['movedTo']}: {item['reason']}\n"
        )
    schedules = result["schedules"]
    if args.output != "table":
        emit(args, schedules)
        return 0
    emit(args, [schedule_row(s) for s in schedules], columns=SCHEDULE_COLUMNS)
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    _emit_schedule(args, _call(args, "schedule.inspect", {"scheduleId": args.schedule})["schedule"])
    return 0


def run_logs(args: argparse.Namespace) -> int:
    params = {"scheduleId": args.schedule, "limit": max(1, min(args.limit, 1000))}
    history = _call(args, "schedule.logs", params)["runs"]
    if args.output != "table":
        emit(args, history)
        return 0
    emit(args, [run_row(run) for run in history], columns=RUN_COLUMNS)
    return 0


def run_pause(args: argparse.Namespace) -> int:
    _emit_schedule(args, _call(args, "schedule.pause", {"scheduleId": args.schedule})["schedule"])
    return 0


def run_resume(args: argparse.Namespace) -> int:
    schedule = _call(args, "schedule.resume", {"scheduleId": args.schedule})["schedule"]
    _emit_schedule(args, schedule)
    return 0


def run_delete(args: argparse.Namespace) -> int:
    emit(args, _call(args, "schedule.delete", {"scheduleId": args.schedule}), id_key="scheduleId")
    return 0


def run_now(args: argparse.Namespace) -> int:
    result = _call(args, "schedule.run-now", {"scheduleId": args.schedule})
    if args.output != "table":
        emit(args, result)
        return 0
    emit(args, {"id": result["schedule"]["id"], "run": result["runId"]})
    return 0
