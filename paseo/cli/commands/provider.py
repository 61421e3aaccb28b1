"""``paseo provider``: agent providers, their availability, models and modes."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import LISTING_WAIT, add_host, connect
from paseo.cli.output import Columns, emit

PROVIDER_COLUMNS = (
    ("id", "ID"),
    ("label", "LABEL"),
    ("status", "STATUS"),
    ("extends", "EXTENDS"),
    ("reason", "REASON"),
)
MODEL_COLUMNS = (("id", "ID"), ("label", "LABEL"), ("default", "DEFAULT"))


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("ls", help="providers and whether they can start agents")
    ls.add_argument("--refresh", action="store_true", help="check availability now")
    add_host(ls)
    ls.set_defaults(run=run_ls)
    models = subs.add_parser("models", help="a provider's models (and modes)")
    models.add_argument("provider", metavar="PROVIDER")
    models.add_argument("--thinking", action="store_true", help="show thinking options")
    models.add_argument("--modes", action="store_true", help="list modes instead of models")
    add_host(models)
    models.set_defaults(run=run_models)


def run_ls(args: argparse.Namespace) -> int:
    with connect(args) as client:
        providers = client.call("provider.list", {"refresh": args.refresh})["providers"]
    if args.output != "table" or args.quiet:
        emit(args, providers)
        return 0
    rows = [
        {
            **provider,
            "status": provider["availability"]["status"]
            + ("" if provider["enabled"] else " (disabled)"),
            "reason": provider["availability"].get("reason"),
        }
        for provider in providers
    ]
    emit(args, rows, columns=PROVIDER_COLUMNS)
    from paseo.cli.hints import program_not_found

    hints = {program_not_found(row["reason"]) for row in rows} - {None}
    for hint in sorted(hint for hint in hints if hint):
        sys.stderr.write(f"paseo: hint: {hint}\n")
    return 0


def run_models(args: argparse.Namespace) -> int:
    with connect(args) as client:
        result = client.call(
            "provider.models", {"providerId": args.provider}, timeout=LISTING_WAIT
        )
    if args.modes:
        emit(args, result["modes"], columns=(("id", "ID"), ("label", "LABEL")))
        return 0
    if args.output != "table" or args.quiet:
        emit(args, result["models"])
        return 0
    columns: Columns = MODEL_COLUMNS
    rows = result["models"]
    if args.thinking:
        columns = (*MODEL_COLUMNS, ("thinking", "THINKING"))
        rows = [
            {**model, "thinking": [option["id"] for option in model["thinkingOptions"]]}
            for model in rows
        ]
    emit(args, rows, columns=columns)
    return 0
