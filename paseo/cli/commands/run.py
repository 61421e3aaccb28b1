"""``paseo run``: create an agent, send it a prompt, wait, print its reply and how it ended."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from paseo.cli.commands._agentcli import (
    EXIT_CODES_HELP,
    add_host,
    connect,
    parse_duration,
    parse_labels,
    report_outcome,
    wait_agent,
)
from paseo.cli.output import emit

if TYPE_CHECKING:
    from paseo.client import SyncClient


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES_HELP
    parser.add_argument("prompt", metavar="PROMPT", help="what the agent should do")
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="an agent profile (daemon.agentProfiles, by name or id): its provider, model, mode, "
        "thinking, system prompt, MCP servers and labels, unless given here",
    )
    parser.add_argument(
        "--provider", help="provider id or PROVIDER/MODEL (default: the first ready provider)"
    )
    parser.add_argument("--model", help="model id")
    parser.add_argument("--mode", help="mode id (see `paseo provider models`)")
    parser.add_argument("--thinking", help="thinking option id")
    parser.add_argument("--title", help="a name for the agent")
    parser.add_argument("--cwd", help="directory the agent works in (default: here)")
    parser.add_argument("--label", action="append", metavar="K=V", help="label (repeatable)")
    parser.add_argument("-d", "--detach", action="store_true", help="print the id, do not wait")
    parser.add_argument(
        "--wait-timeout", type=parse_duration, help="stop waiting after this long (30s, 5m, 1h)"
    )
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    params = {
        "profile": args.profile,
        "provider": args.provider,
        "model": args.model,
        "modeId": args.mode,
        "thinkingOptionId": args.thinking,
        "title": args.title,
        "cwd": os.path.abspath(args.cwd or os.getcwd()),
        "labels": parse_labels(args.label),
        "initialPrompt": args.prompt,
    }
    with connect(args) as client:
        created = client.call("agent.create", {k: v for k, v in params.items() if v is not None})
        agent = created["agent"]
        if args.detach:
            if args.output != "table" or args.quiet:
                emit(args, agent)
            else:
                sys.stdout.write(f"{agent['id']}\n")
                sys.stderr.write(
                    f"paseo: agent {agent['id'][:8]} started ({agent['provider']}, "
                    f"{agent['cwd']}); follow it with `paseo attach {agent['id'][:8]}`\n"
                )
            return 0
        if args.output == "table" and not args.quiet:
            _report_errors_live(client, agent["id"])
        result = wait_agent(client, agent["id"], args.wait_timeout)
    return report_outcome(args, result, reply=True)


def _report_errors_live(client: SyncClient, agent_id: str) -> None:
    """Print the agent's error items on stderr as they happen: a model API failing for minutes
    (Claude Code retrying an HTTP 500) must not look like a silent hang."""

    def on_event(_method: str, params: dict[str, Any]) -> None:
        if params.get("agentId") != agent_id:
            return
        event = (params.get("entry") or {}).get("event") or {}
        item = event.get("item") if event.get("type") == "timeline" else None
        if isinstance(item, dict) and item.get("type") == "error":
            sys.stderr.write(f"paseo: agent {agent_id[:8]}: {item.get('message')}\n")
            sys.stderr.flush()

    client.on("agent.event", on_event)
    client.subscribe([f"agent:{agent_id}"])
