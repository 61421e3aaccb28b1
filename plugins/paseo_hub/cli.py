"""``paseo hub connect <url> --token <token> | status | disconnect [--force]``.

Each command is one ``hub.relationship.*`` call on the running daemon (the daemon owns the
relationship; the CLI never touches ``hub-relationship.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from paseo_hookspecs.cli_client import DaemonCaller

from paseo_hub.text import printable, printable_list

EXIT_FAILED = 1

FIELDS = (
    ("state", "State"),
    ("hubOrigin", "Hub"),
    ("slug", "Slug"),
    ("daemonId", "Daemon id"),
    ("scopes", "Scopes"),
    ("since", "Since"),
    ("lastError", "Last error"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="hub_command", metavar="COMMAND", required=True)
    connect = commands.add_parser("connect", help="enroll this daemon with a Paseo Hub")
    connect.add_argument("url", help="the Hub's URL, e.g. https://hub.example.com")
    connect.add_argument(
        "--token", required=True, help="a one-time enrollment token minted by the Hub"
    )
    connect.set_defaults(run=_run_connect)
    status = commands.add_parser("status", help="show the Hub relationship")
    status.set_defaults(run=_run_status)
    disconnect = commands.add_parser("disconnect", help="revoke and forget the relationship")
    disconnect.add_argument(
        "--force",
        action="store_true",
        help="drop local authority now, even if the Hub cannot be told",
    )
    disconnect.set_defaults(run=_run_disconnect)


def _caller(args: argparse.Namespace) -> DaemonCaller:
    from paseo_hookspecs.cli_client import WebSocketCaller

    return WebSocketCaller(getattr(args, "home", None), client_name="hub")


def _run_connect(args: argparse.Namespace) -> int:
    params = {"url": args.url, "token": args.token}
    return _run(args, "hub.relationship.connect", params)


def _run_status(args: argparse.Namespace) -> int:
    return _run(args, "hub.relationship.get_status", {})


def _run_disconnect(args: argparse.Namespace) -> int:
    return _run(args, "hub.relationship.disconnect", {"force": bool(args.force)})


def _run(args: argparse.Namespace, method: str, params: dict[str, Any]) -> int:
    from paseo_hookspecs.errors import PaseoError

    try:
        status = asyncio.run(_caller(args).call(method, params))
    except PaseoError as exc:
        # The message may quote the Hub (a refusal's reason).
        print(f"paseo hub: {printable(exc.message, 400)} ({exc.code})", file=sys.stderr)
        return EXIT_FAILED
    return render(status, getattr(args, "output", "table"), method)


def _displayed(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value, 400)
    if isinstance(value, list):
        return printable_list(str(item) for item in value)
    return value


def render(status: dict[str, Any], output: str, method: str) -> int:
    """Print ``status``; the exit code says whether the command achieved its aim."""
    # The daemon keeps what the Hub sent printable and bounded; this holds for any daemon
    # (an older one, a status file it wrote before): strings from a Hub never reach the
    # terminal raw. JSON escapes every control character by itself (ensure_ascii).
    shown = {key: _displayed(value) for key, value in status.items()}
    if output == "json":
        print(json.dumps(shown, indent=2))
    elif output == "yaml":
        for key, value in shown.items():
            print(f"{printable(str(key))}: {json.dumps(value)}")
    else:
        width = max(len(label) for _, label in FIELDS)
        for key, label in FIELDS:
            value = shown.get(key)
            if value in (None, []):
                continue
            text = ", ".join(value) if isinstance(value, list) else str(value)
            print(f"{label:<{width}}  {text}")
    if shown.get("warning"):
        print(f"warning: {shown['warning']}", file=sys.stderr)
    state = status.get("state")
    if method.endswith(".connect") and state in ("not_connected", "revoked"):
        return EXIT_FAILED
    return 0
