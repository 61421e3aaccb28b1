"""``paseo reload``: re-read config.json inside the running daemon (same as
``paseo daemon reload``)."""

from __future__ import annotations

import argparse

from paseo.cli.commands.daemon import run_reload


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="daemon address (default: this home's)")
    parser.set_defaults(run=run_reload)
