"""``paseo run``: create an agent, send it a prompt, wait, print its reply and how it ended.

``--worktree NAME`` runs the agent in a Paseo-owned worktree on branch NAME (created off
``--base``, or the one an earlier run made); ``--output-schema`` asks again until the reply is
JSON that validates (see :mod:`paseo.cli.commands._structured`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from paseo.cli.commands import _structured
from paseo.cli.commands._agentcli import (
    EXIT_CODES_HELP,
    add_host,
    connect,
    interrupted,
    parse_duration,
    parse_labels,
    report_outcome,
    wait_agent,
)
from paseo.cli.commands._images import add_image_option, load_images
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit

if TYPE_CHECKING:
    from paseo.client import SyncClient

WORKTREE_TIMEOUT = 1800.0
"""Seconds a worktree's creation (with its ``paseo.json`` setup) may take."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        f"{EXIT_CODES_HELP}, {_structured.EXIT_INVALID} no reply matched --output-schema"
    )
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
    parser.add_argument(
        "--worktree",
        metavar="NAME",
        help="work in a Paseo-owned worktree on branch NAME of the --cwd repository "
        "(created, or the one made before)",
    )
    parser.add_argument("--base", metavar="REF", help="with --worktree: the branch to start from")
    parser.add_argument(
        "--budget-tokens",
        type=int,
        metavar="N",
        help="refuse the agent's prompts once its turns spent N tokens (input, output and cache)",
    )
    parser.add_argument(
        "--budget-usd",
        type=float,
        metavar="X",
        help="refuse the agent's prompts once its turns cost X USD (as its provider reports)",
    )
    add_image_option(parser)
    parser.add_argument(
        "--output-schema",
        metavar="FILE|JSON",
        help=f"the reply must be JSON valid for this schema; asked up to "
        f"{_structured.ATTEMPTS} times (not with -d)",
    )
    parser.add_argument("-d", "--detach", action="store_true", help="print the id, do not wait")
    parser.add_argument(
        "--wait-timeout", type=parse_duration, help="stop waiting after this long (30s, 5m, 1h)"
    )
    add_host(parser)
    parser.set_defaults(run=run)


def budget_param(tokens: int | None, usd: float | None) -> dict[str, Any] | None:
    """The ``budget`` parameter of ``--budget-tokens``/``--budget-usd`` (``None``: neither)."""
    if tokens is not None and tokens < 1:
        raise CliError(f"--budget-tokens must be at least 1, got {tokens}", exit_code=EXIT_USAGE)
    if usd is not None and not usd > 0:
        raise CliError(f"--budget-usd must be more than 0, got {usd}", exit_code=EXIT_USAGE)
    budget = {"tokens": tokens, "usd": usd}
    return {k: v for k, v in budget.items() if v is not None} or None


def run(args: argparse.Namespace) -> int:
    if args.output_schema is not None and args.detach:
        raise CliError(
            "--output-schema waits for the reply to check it; it cannot be used with -d",
            exit_code=EXIT_USAGE,
        )
    if args.base is not None and args.worktree is None:
        raise CliError(
            "--base names where a --worktree starts; give --worktree NAME too",
            exit_code=EXIT_USAGE,
        )
    schema = _structured.load_schema(args.output_schema) if args.output_schema else None
    cwd = os.path.abspath(args.cwd or os.getcwd())
    params: dict[str, Any] = {
        "profile": args.profile,
        "provider": args.provider,
        "model": args.model,
        "modeId": args.mode,
        "thinkingOptionId": args.thinking,
        "title": args.title,
        "cwd": cwd,
        "labels": parse_labels(args.label),
        "initialPrompt": _structured.first_prompt(args.prompt, schema) if schema else args.prompt,
        "images": load_images(args.image) or None,
        "budget": budget_param(args.budget_tokens, args.budget_usd),
    }
    with connect(args) as client:
        if args.worktree:
            params["workspaceId"] = _worktree_workspace(client, args, cwd)
            params["cwd"] = None
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
        try:
            if args.output == "table" and not args.quiet:
                _report_errors_live(client, agent["id"])
            result = wait_agent(client, agent["id"], args.wait_timeout)
            if schema is None:
                return report_outcome(args, result, reply=True)
            return _until_valid(args, client, result, schema)
        except KeyboardInterrupt:
            raise interrupted(str(agent["id"])) from None


def _worktree_workspace(client: SyncClient, args: argparse.Namespace, cwd: str) -> str:
    """The workspace of the worktree ``--worktree`` names: created off ``--base`` (or the
    default branch), or the one an earlier request made for that name."""
    from paseo_hookspecs.errors import Conflict

    params: dict[str, Any] = {"cwd": cwd, "mode": "branch-off", "branch": args.worktree}
    if args.base:
        params["base"] = args.base
    try:
        result = client.call("worktree.create", params, timeout=WORKTREE_TIMEOUT)
    except Conflict as exc:
        # Made before by another request (another --base): use it, unless a base was asked for.
        worktree_id = exc.data.get("worktreeId")
        listed = [] if args.base else client.call("worktree.list", {})["worktrees"]
        for worktree in listed:
            if worktree["id"] == worktree_id and not worktree.get("archived"):
                return str(worktree["workspaceId"])
        raise
    return str(result["workspace"]["workspaceId"])


def _until_valid(
    args: argparse.Namespace, client: SyncClient, result: dict[str, Any], schema: dict[str, Any]
) -> int:
    """Check each reply against ``schema``, asking again until one validates."""
    agent_id = str(result["agentId"])
    problem = "no reply"
    for attempt in range(1, _structured.ATTEMPTS + 1):
        if result["outcome"] != "idle":
            return report_outcome(args, result, reply=True)
        document, problem_or_none = _structured.check(result.get("lastMessage"), schema)
        if problem_or_none is None:
            if args.output != "table":
                emit(args, {**result, "output": document, "attempts": attempt}, id_key="agentId")
            elif args.quiet:
                sys.stdout.write(f"{agent_id}\n")
            else:
                sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
                sys.stderr.write(f"paseo: agent {agent_id[:8]} finished (idle)\n")
            return 0
        problem = problem_or_none
        if attempt == _structured.ATTEMPTS:
            break
        if args.output == "table" and not args.quiet:
            sys.stderr.write(
                f"paseo: agent {agent_id[:8]}: reply {attempt} does not match the schema "
                f"({problem}); asking again\n"
            )
        client.call(
            "agent.send", {"agentId": agent_id, "text": _structured.retry_prompt(problem, schema)}
        )
        result = wait_agent(client, agent_id, args.wait_timeout)
    raise CliError(
        f"agent {agent_id[:8]}: no reply matched the schema in {_structured.ATTEMPTS} attempts "
        f"(the last: {problem}); see `paseo logs {agent_id[:8]}`",
        exit_code=_structured.EXIT_INVALID,
    )


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
