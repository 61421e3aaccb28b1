"""``paseo daemon token create|ls|revoke``: app tokens, the credential a browser, the app or a
remote client keeps across restarts (see :mod:`paseo.home.app_tokens`). They act on
``$PASEO_HOME/app-tokens.json`` directly, so they work whether or not the daemon runs; a running
daemon reads the change at the next connection."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.errors import CliError
from paseo.cli.output import emit

COLUMNS = (("id", "ID"), ("name", "NAME"), ("createdAt", "CREATED"))


def configure(subs: Any) -> None:
    """Add ``token`` to ``paseo daemon``'s sub-commands."""
    token = subs.add_parser(
        "token", help="credentials for the app and remote clients that survive restarts"
    )
    verbs = token.add_subparsers(dest="verb", metavar="VERB", required=True)
    create = verbs.add_parser("create", help="create a token; its secret is printed once")
    create.add_argument("--name", required=True, help="what the token is for (e.g. laptop-app)")
    create.set_defaults(run=run_create)
    listing = verbs.add_parser("ls", help="list the tokens (never their secrets)")
    listing.set_defaults(run=run_ls)
    revoke = verbs.add_parser("revoke", help="revoke a token: new connections with it fail")
    revoke.add_argument("token", metavar="ID", help="the token's id or name")
    revoke.set_defaults(run=run_revoke)


def _store(args: argparse.Namespace) -> Any:
    from paseo.cli.context import home_layout
    from paseo.home.app_tokens import AppTokens

    layout = home_layout(args)
    try:
        layout.create_root()
    except OSError as exc:
        raise CliError(f"cannot use the home {layout.root}: {exc.strerror or exc}") from None
    return AppTokens(layout.app_tokens)


def run_create(args: argparse.Namespace) -> int:
    from paseo.home.app_tokens import AppTokenError

    try:
        token, secret = _store(args).create(args.name)
    except AppTokenError as exc:
        raise CliError(str(exc)) from None
    if getattr(args, "output", "table") == "table":
        sys.stdout.write(f"{secret}\n")
        if not getattr(args, "quiet", False):
            sys.stderr.write(
                f"paseo: app token {token.id} ({token.name}) created; the secret above is "
                "shown only now. Give it to the app as its password; it grants a remote "
                "session and survives restarts until `paseo daemon token revoke "
                f"{token.id}`\n"
            )
        return 0
    emit(args, {**token.public(), "token": secret})
    return 0


def run_ls(args: argparse.Namespace) -> int:
    from paseo.home.app_tokens import AppTokenError

    try:
        tokens = _store(args).entries()
    except AppTokenError as exc:
        raise CliError(str(exc)) from None
    emit(args, [t.public() for t in tokens], columns=COLUMNS)
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    from paseo.home.app_tokens import AppTokenError

    try:
        token = _store(args).revoke(args.token)
    except AppTokenError as exc:
        raise CliError(str(exc)) from None
    if not getattr(args, "quiet", False):
        sys.stdout.write(f"revoked app token {token.id} ({token.name})\n")
    return 0
