"""``paseo agent``: change a running agent (mode, title and labels, reload), list its slash
commands, plus every agent command under one group (``paseo agent ls`` is ``paseo ls``)."""

from __future__ import annotations

import argparse
import importlib
import sys

from paseo.cli.commands._agentcli import LISTING_WAIT, add_host, connect, parse_labels
from paseo.cli.output import emit

ALIASES = (
    ("run", "create an agent and wait for its reply"),
    ("ls", "list agents"),
    ("attach", "follow an agent's live events"),
    ("logs", "an agent's timeline"),
    ("send", "prompt an agent"),
    ("wait", "wait for an agent"),
    ("stop", "stop an agent"),
    ("archive", "archive an agent"),
    ("delete", "delete an agent"),
    ("inspect", "everything about an agent"),
    ("import", "adopt a provider conversation"),
)
MODULES = {"import": "import_session"}
"""Commands whose module is not named after them (``import`` is a keyword)."""


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    mode = subs.add_parser("mode", help="show or switch an agent's mode")
    mode.add_argument("agent", metavar="ID")
    mode.add_argument("mode", metavar="MODE", nargs="?", help="switch to this mode")
    mode.add_argument("--list", action="store_true", help="list the provider's modes")
    add_host(mode)
    mode.set_defaults(run=run_mode)
    update = subs.add_parser("update", help="change an agent's title or labels")
    update.add_argument("agent", metavar="ID")
    update.add_argument("--title", "--name", dest="title", help="new title")
    update.add_argument("--label", action="append", metavar="K=V", help="set a label")
    update.add_argument("--unlabel", action="append", metavar="K", help="remove a label")
    add_host(update)
    update.set_defaults(run=run_update)
    reload = subs.add_parser("reload", help="restart the provider process, keep the session")
    reload.add_argument("agent", metavar="ID")
    add_host(reload)
    reload.set_defaults(run=run_reload)
    budget = subs.add_parser(
        "budget",
        help="show, set or lift an agent's spending cap",
        description="Show, set or lift what an agent may spend. Once its turns reach the "
        "budget its prompts are refused (exit status 9) until the budget is raised or lifted.",
    )
    budget.add_argument("agent", metavar="ID")
    budget.add_argument("--tokens", type=int, metavar="N", help="cap on tokens (all kinds)")
    budget.add_argument("--usd", type=float, metavar="X", help="cap on cost in USD")
    budget.add_argument("--clear", action="store_true", help="lift the budget")
    add_host(budget)
    budget.set_defaults(run=run_budget)
    commands = subs.add_parser(
        "commands", help="the slash commands the agent's running program reported"
    )
    commands.add_argument("agent", metavar="ID")
    add_host(commands)
    commands.set_defaults(run=run_commands)
    for name, summary in ALIASES:
        module = importlib.import_module(f"paseo.cli.commands.{MODULES.get(name, name)}")
        module.configure(subs.add_parser(name, help=summary, description=summary))


def _show(args: argparse.Namespace, agent: dict[str, object], done: str) -> None:
    if args.output != "table" or args.quiet:
        emit(args, agent)
    else:
        sys.stdout.write(f"{done} {str(agent['id'])[:8]}\n")


def run_mode(args: argparse.Namespace) -> int:
    with connect(args) as client:
        if args.mode and not args.list:
            agent = client.call("agent.mode.set", {"agentId": args.agent, "modeId": args.mode})
            _show(args, agent["agent"], f"mode {args.mode} set on")
            return 0
        modes = client.call("agent.modes", {"agentId": args.agent}, timeout=LISTING_WAIT)
    if args.list or args.output != "table":
        rows = [{**m, "current": m["id"] == modes["current"]} for m in modes["modes"]]
        emit(args, rows, columns=(("id", "ID"), ("label", "LABEL"), ("current", "CURRENT")))
    else:
        sys.stdout.write(f"{modes['current'] or '-'}\n")
    return 0


def run_update(args: argparse.Namespace) -> int:
    labels: dict[str, str | None] = dict(parse_labels(args.label))
    labels.update(dict.fromkeys(args.unlabel or []))
    with connect(args) as client:
        agent = client.call(
            "agent.update", {"agentId": args.agent, "title": args.title, "labels": labels}
        )["agent"]
    _show(args, agent, "updated")
    return 0


def run_budget(args: argparse.Namespace) -> int:
    from paseo.cli.commands.run import budget_param
    from paseo.cli.errors import EXIT_USAGE, CliError

    budget = budget_param(args.tokens, args.usd)
    if args.clear and budget is not None:
        raise CliError("give --tokens/--usd or --clear, not both", exit_code=EXIT_USAGE)
    with connect(args) as client:
        if budget is None and not args.clear:
            result = client.call("usage.agent", {"agentId": args.agent})
        else:
            params = {"agentId": args.agent, "budget": budget, "clear": args.clear}
            result = client.call("usage.budget", params)
    if args.output != "table" or args.quiet:
        emit(args, result)
        return 0
    cap = result.get("budget") or {}
    spent = result["usage"]
    tokens = sum(
        spent.get(k) or 0
        for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
    )
    cost = spent.get("costUsd")
    limits = []
    if cap.get("tokens") is not None:
        limits.append(f"{cap['tokens']} tokens")
    if cap.get("usd") is not None:
        limits.append(f"${cap['usd']}")
    sys.stdout.write(
        f"agent {result['agentId'][:8]}: budget {', '.join(limits) or 'none'}; spent {tokens} "
        f"tokens, {'$' + format(cost, '.4f') if cost is not None else 'cost unknown'}\n"
    )
    return 0


def run_reload(args: argparse.Namespace) -> int:
    with connect(args) as client:
        agent = client.call("agent.reload", {"agentId": args.agent}, timeout=120)["agent"]
    _show(args, agent, "reloaded")
    return 0


def run_commands(args: argparse.Namespace) -> int:
    with connect(args) as client:
        found = client.call("agent.commands", {"agentId": args.agent})
    if not found["live"] and args.output == "table" and not getattr(args, "quiet", False):
        # An empty table alone would read as "this program has no commands".
        sys.stderr.write(
            f"agent {str(found['agentId'])[:8]} has no running session: its commands are "
            "known once it runs (`paseo send` starts it)\n"
        )
    emit(
        args,
        found["commands"],
        columns=(("name", "NAME"), ("argumentHint", "ARGUMENTS"), ("description", "DESCRIPTION")),
        id_key="name",
    )
    return 0
