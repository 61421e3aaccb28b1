"""``paseo send``: prompt an existing agent (a running turn is replaced), wait, print the reply."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from paseo.cli.commands._agentcli import (
    EXIT_CODES_HELP,
    add_host,
    connect,
    interrupted,
    parse_duration,
    report_outcome,
    wait_agent,
)
from paseo.cli.commands._images import add_image_option, load_images
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.files import MIB, read_named_text
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES_HELP
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    # Words of the prompt are joined with spaces; `trailing` lets them follow options that
    # come after ID (see paseo.cli.app).
    parser.add_argument("prompt", metavar="PROMPT", nargs="*", help="the prompt ('-': stdin)")
    parser.set_defaults(trailing="prompt")
    parser.add_argument("--prompt-file", type=Path, help="read the prompt from this file")
    parser.add_argument("--message-id", help="client message id; a repeat is ignored")
    parser.add_argument("--no-wait", action="store_true", help="return once the prompt is sent")
    parser.add_argument("--wait-timeout", type=parse_duration, help="stop waiting after this")
    add_image_option(parser)
    add_host(parser)
    parser.set_defaults(run=run)


MAX_PROMPT_BYTES = MIB
"""The largest ``--prompt-file``: the prompt travels in one request under the daemon's 2 MiB
frame limit."""


def _prompt(args: argparse.Namespace) -> str:
    args.prompt = " ".join(args.prompt) if args.prompt else None
    if args.prompt_file is not None:
        if args.prompt is not None:
            raise CliError("give PROMPT or --prompt-file, not both", exit_code=EXIT_USAGE)
        return read_named_text(str(args.prompt_file), what="--prompt-file", limit=MAX_PROMPT_BYTES)
    if args.prompt == "-" or (args.prompt is None and not sys.stdin.isatty()):
        return sys.stdin.read()
    if not args.prompt:
        raise CliError("give a PROMPT, --prompt-file or a prompt on stdin", exit_code=EXIT_USAGE)
    return str(args.prompt)


def run(args: argparse.Namespace) -> int:
    text = _prompt(args)
    if not text.strip():
        raise CliError("the prompt is empty", exit_code=EXIT_USAGE)
    params: dict[str, Any] = {"agentId": args.agent, "text": text}
    if args.message_id:
        params["messageId"] = args.message_id
    if args.image:
        params["images"] = load_images(args.image)
    with connect(args) as client:
        sent = client.call("agent.send", params)
        if args.no_wait:
            if args.output != "table" or args.quiet:
                emit(args, sent, id_key="agentId")
            elif not sent["accepted"]:
                sys.stderr.write(f"paseo: message {sent['messageId']} was already sent\n")
            return 0
        try:
            result = wait_agent(client, sent["agentId"], args.wait_timeout)
        except KeyboardInterrupt:
            raise interrupted(str(sent["agentId"])) from None
    return report_outcome(args, result, reply=True)
