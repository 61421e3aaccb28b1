"""``paseo chat create|ls|inspect|delete|post|read|wait``: each one ``chat.*`` call.

Inside an agent the daemon sets ``$PASEO_AGENT_ID``: ``post`` sends it as the author, so an
agent's post is shown as that agent's; a person's is ``manual``. The author is a label the
client claims (the CLI holds the local credential either way), not an authenticated identity.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from typing import Any

EXIT_FAILED = 1
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="chat_command", metavar="COMMAND", required=True)
    create = commands.add_parser("create", help="create a room")
    create.add_argument("name", help="the room's name (unique, case-insensitively)")
    create.add_argument("--purpose", help="what the room is for")
    create.set_defaults(run=_run_create)
    listing = commands.add_parser("ls", help="list rooms")
    listing.set_defaults(run=_run_ls)
    inspect = commands.add_parser("inspect", help="show one room")
    inspect.add_argument("room", help="the room's id or name")
    inspect.set_defaults(run=_run_inspect)
    delete = commands.add_parser("delete", help="delete a room and its messages")
    delete.add_argument("room", help="the room's id or name")
    delete.set_defaults(run=_run_delete)
    post = commands.add_parser(
        "post", help="post a message (as $PASEO_AGENT_ID inside an agent, else as manual)"
    )
    post.add_argument("room", help="the room's id or name")
    post.add_argument("body", nargs="+", help="the message; @<agent id or title> prompts it")
    post.add_argument("--reply-to", dest="reply_to", help="the id of the message answered")
    post.set_defaults(run=_run_post, trailing="body")
    read = commands.add_parser("read", help="show a room's newest messages")
    read.add_argument("room", help="the room's id or name")
    read.add_argument("--limit", type=int, default=50, help="how many (default 50, most 500)")
    read.add_argument("--since", help="only messages after this ISO 8601 time")
    read.add_argument("--agent", help="only messages by this author (an agent id or manual)")
    read.add_argument("--before", help="page back: only messages older than this message id")
    read.set_defaults(run=_run_read)
    wait = commands.add_parser("wait", help="wait for a new message")
    wait.add_argument("room", help="the room's id or name")
    wait.add_argument("--after", help="return messages after this message id (default: now)")
    wait.add_argument("--timeout", default="30s", help="give up after this long (30s, 2m)")
    wait.set_defaults(run=_run_wait)


def _author() -> str:
    return os.environ.get("PASEO_AGENT_ID") or "manual"


def _run_create(args: argparse.Namespace) -> int:
    params = {"name": args.name, **({"purpose": args.purpose} if args.purpose else {})}
    return _rooms(args, _call(args, "chat.create", params))


def _run_ls(args: argparse.Namespace) -> int:
    return _rooms(args, _call(args, "chat.list", {}))


def _run_inspect(args: argparse.Namespace) -> int:
    return _rooms(args, _call(args, "chat.inspect", {"room": args.room}))


def _run_delete(args: argparse.Namespace) -> int:
    return _rooms(args, _call(args, "chat.delete", {"room": args.room}))


def _run_post(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {
        "room": args.room,
        "body": " ".join(args.body),
        "authorAgentId": _author(),
    }
    if args.reply_to:
        params["replyToMessageId"] = args.reply_to
    result = _call(args, "chat.post", params)
    if result is None:
        return EXIT_FAILED
    return _messages(args, {"messages": [result["message"]]}, result)


def _run_read(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"room": args.room, "limit": args.limit}
    for key, value in (
        ("since", args.since),
        ("authorAgentId", args.agent),
        ("beforeMessageId", args.before),
    ):
        if value:
            params[key] = value
    result = _call(args, "chat.read", params)
    return EXIT_FAILED if result is None else _messages(args, result, result)


def _run_wait(args: argparse.Namespace) -> int:
    seconds = _seconds(args.timeout)
    if seconds is None:
        print(
            f"paseo chat: --timeout {args.timeout!r} is not a duration (30s, 2m)", file=sys.stderr
        )
        return EXIT_FAILED
    params: dict[str, Any] = {"room": args.room, "timeoutMs": int(seconds * 1000)}
    if args.after:
        params["afterMessageId"] = args.after
    result = _call(args, "chat.wait", params, timeout=seconds + 30)
    return EXIT_FAILED if result is None else _messages(args, result, result)


def _seconds(text: str) -> float | None:
    match = _DURATION.match(text)
    if match is None:
        return None
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


def _call(
    args: argparse.Namespace, method: str, params: dict[str, Any], *, timeout: float = 120.0
) -> dict[str, Any] | None:
    from paseo_hookspecs.cli_client import WebSocketCaller
    from paseo_hookspecs.errors import PaseoError

    try:
        return asyncio.run(
            WebSocketCaller(getattr(args, "home", None), timeout=timeout, client_name="chat").call(
                method, params
            )
        )
    except PaseoError as exc:
        print(f"paseo chat: {printable(exc.message)} ({exc.code})", file=sys.stderr)
        return None


def printable(text: str) -> str:
    """``text`` with control and format characters as spaces: another author's message
    must not drive the reader's terminal."""
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _rooms(args: argparse.Namespace, result: dict[str, Any] | None) -> int:
    if result is None:
        return EXIT_FAILED
    output = getattr(args, "output", "table")
    if output != "table":
        print(json.dumps(result, indent=2))
        return 0
    rooms = result["rooms"] if "rooms" in result else [result["room"]]
    if getattr(args, "quiet", False):
        for room in rooms:
            print(room["id"])
        return 0
    if not getattr(args, "no_headers", False):
        print(f"{'ID':<36}  {'NAME':<24}  {'MESSAGES':>8}  LAST MESSAGE")
    for room in rooms:
        name = printable(room["name"])
        print(
            f"{room['id']:<36}  {name:<24}  {room['messageCount']:>8}  "
            f"{room.get('lastMessageAt') or '-'}"
        )
    return 0


def _messages(args: argparse.Namespace, shown: dict[str, Any], result: dict[str, Any]) -> int:
    output = getattr(args, "output", "table")
    if output != "table":
        print(json.dumps(result, indent=2))
        return 0
    for message in shown["messages"]:
        if getattr(args, "quiet", False):
            print(message["id"])
            continue
        reply = f" (re {message['replyToMessageId']})" if message.get("replyToMessageId") else ""
        print(
            f"[{message['createdAt']}] {printable(message['authorAgentId'])}{reply}: "
            f"{printable(message['body'])}  #{message['id']}"
        )
    return 0
