"""``paseo terminal …``: workspace terminals the daemon keeps.

Terminals are named by full id or a unique id prefix. ``send-keys`` follows tmux: each KEY is
a key name (``Enter``, ``Tab``, ``Escape``, ``Space``, ``BSpace``, ``Up``/``Down``/``Left``/
``Right``, ``Home``, ``End``, ``PageUp``, ``PageDown``, ``Delete``, ``C-<x>``, ``M-<x>``) or
literal text, sent without separators; ``-l`` sends every KEY literally.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo_hookspecs.terminals import encode_keys

from paseo.cli.commands._terminalcli import connect, resolve
from paseo.cli.output import emit

COLUMNS = [
    ("short", "ID"),
    ("workspaceId", "WORKSPACE"),
    ("profileId", "PROFILE"),
    ("state", "STATE"),
    ("active", "ACTIVE"),
    ("size", "SIZE"),
    ("title", "TITLE"),
    ("cwd", "CWD"),
]

SHORT_ID = 12

def _host(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="daemon address (default: this home's daemon)")


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")

    ls = subs.add_parser("ls", help="list terminals")
    ls.add_argument("--workspace", metavar="ID", help="only this workspace's terminals")
    ls.set_defaults(run=run_ls)

    create = subs.add_parser("create", help="start a terminal in a workspace")
    where = create.add_mutually_exclusive_group()
    where.add_argument("--workspace", metavar="ID", help="open in this workspace's directory")
    where.add_argument("--cwd", help="a directory, placed into its workspace (default: .)")
    create.add_argument("--profile", metavar="ID", help="profile to start (default: the first)")
    create.add_argument("--prompt", help="text for the profile's {{{prompt}}} argument")
    create.add_argument("--columns", type=int, default=80, help="width (default 80)")
    create.add_argument("--rows", type=int, default=24, help="height (default 24)")
    create.set_defaults(run=run_create)

    kill = subs.add_parser("kill", help="end a terminal's program and forget the terminal")
    kill.add_argument("terminal", metavar="ID", help="terminal id or unique prefix")
    kill.set_defaults(run=run_kill)

    capture = subs.add_parser("capture", help="print a terminal's scrollback and screen")
    capture.add_argument("terminal", metavar="ID", help="terminal id or unique prefix")
    capture.add_argument(
        "-S", "--start", type=int, help="first line (0 the oldest; negative from the end)"
    )
    capture.add_argument("-E", "--end", type=int, help="last line, inclusive (-1 the last)")
    capture.add_argument("--ansi", action="store_true", help="keep colours and attributes")
    capture.set_defaults(run=run_capture)

    send = subs.add_parser("send-keys", help="type keys into a terminal (tmux key names)")
    send.add_argument("-l", "--literal", action="store_true", help="send KEYS as plain text")
    send.add_argument("terminal", metavar="ID", help="terminal id or unique prefix")
    send.add_argument("keys", metavar="KEYS", nargs="+", help="key names or text")
    send.set_defaults(run=run_send_keys)

    attach = subs.add_parser(
        "attach", help="join a terminal from this one (detach with Ctrl-])"
    )
    attach.add_argument("terminal", metavar="ID", help="terminal id or unique prefix")
    attach.set_defaults(run=run_attach)

    for sub in (ls, create, kill, capture, send, attach):
        _host(sub)


def _row(terminal: dict[str, Any]) -> dict[str, Any]:
    state = terminal["state"]
    if state == "exited":
        code = terminal.get("exitCode")
        state = f"exited {code}" if code is not None else f"killed {terminal.get('signal')}"
    return {
        **terminal,
        "short": terminal["terminalId"][:SHORT_ID],
        "state": state,
        "size": f"{terminal['columns']}x{terminal['rows']}",
    }


def run_ls(args: argparse.Namespace) -> int:
    params = {"workspaceId": args.workspace} if args.workspace else {}
    with connect(args) as client:
        terminals = client.call("terminal.list", params)["terminals"]
    if args.output != "table" or args.quiet:
        emit(args, terminals, id_key="terminalId")
        return 0
    emit(args, [_row(t) for t in terminals], columns=COLUMNS)
    return 0


def run_create(args: argparse.Namespace) -> int:
    from paseo.cli.commands.project import absolute

    params: dict[str, Any] = {"columns": args.columns, "rows": args.rows}
    if args.workspace:
        params["workspaceId"] = args.workspace
    else:
        params["cwd"] = absolute(args.cwd or ".")
    if args.profile:
        params["profileId"] = args.profile
    if args.prompt is not None:
        params["prompt"] = args.prompt
    with connect(args) as client:
        terminal = client.call("terminal.create", params)["terminal"]
    _emit_one(args, terminal)
    return 0


def _emit_one(args: argparse.Namespace, terminal: dict[str, Any]) -> None:
    if args.output != "table" or args.quiet:
        emit(args, terminal, id_key="terminalId")
        return
    row = _row(terminal)
    emit(args, {key: row.get(key) for key in ("terminalId", *(k for k, _ in COLUMNS[1:]))})


def run_kill(args: argparse.Namespace) -> int:
    with connect(args) as client:
        terminal = client.call("terminal.kill", {"terminalId": resolve(client, args.terminal)})
    _emit_one(args, terminal["terminal"])
    return 0


def run_capture(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"ansi": args.ansi}
    if args.start is not None:
        params["start"] = args.start
    if args.end is not None:
        params["end"] = args.end
    with connect(args) as client:
        params["terminalId"] = resolve(client, args.terminal)
        result = client.call("terminal.capture", params)
    if args.output != "table":
        emit(args, result, id_key="terminalId")
        return 0
    if not args.quiet:
        sys.stdout.write("".join(f"{line}\n" for line in result["lines"]))
    return 0


def run_send_keys(args: argparse.Namespace) -> int:
    data = encode_keys(args.keys, literal=args.literal)
    with connect(args) as client:
        terminal_id = resolve(client, args.terminal)
        client.call("terminal.input", {"terminalId": terminal_id, "data": data})
    if args.output != "table":
        emit(args, {"terminalId": terminal_id, "sent": len(data)}, id_key="terminalId")
    return 0


def run_attach(args: argparse.Namespace) -> int:
    from paseo.cli.commands._terminalattach import attach

    return attach(args)
