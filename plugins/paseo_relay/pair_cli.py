"""``paseo daemon pair [--json] [--rotate]``: print the pairing offer of this home, as the
TypeScript CLI does (``packages/cli/src/commands/daemon/pair.ts``). Local only: it reads
``config.json`` and creates ``server-id`` and ``daemon-keypair.json`` if missing, never asking
the daemon.

``--rotate`` first replaces the keypair: every offer printed before stops working (a client
holding one fails its first box); a running daemon reads the keypair for each new handshake,
so no restart is needed, and connections already open keep their session keys until they end.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys

DISABLED = "Relay pairing is disabled for this daemon config."
ENABLE_HINT = (
    "Enable the relay (`paseo config set daemon.relay.enabled true`, or PASEO_RELAY_ENABLED=1) "
    "and run this command again."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the pairing offer (URL and QR code) of this home's daemon, for the app, a phone "
        "or another Paseo CLI to connect through the relay. Local only: the daemon is not asked."
    )
    parser.add_argument(
        "--rotate",
        action="store_true",
        help="make a new daemon keypair first: offers printed before stop working",
    )
    parser.set_defaults(run=run_pair)


def render_qr(url: str) -> str:
    """The QR of ``url`` as terminal text (Unicode half blocks, dark on light, quiet zone)."""
    import segno

    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True)
    return out.getvalue().rstrip("\n")


def run_pair(args: argparse.Namespace) -> int:
    from paseo_relay.identity import (
        IdentityError,
        home_path,
        load_or_create_keypair,
        load_or_create_server_id,
        rotate_keypair,
    )
    from paseo_relay.offer import Offer, OfferError, encode_offer_url, parse_offer_url
    from paseo_relay.settings import SettingsError, read_settings

    env = os.environ
    home = home_path(getattr(args, "home", None), env)
    try:
        settings = read_settings(home, env)
    except SettingsError as exc:
        sys.stderr.write(f"paseo: error: {exc}\n")
        return 1
    if not settings.enabled:
        sys.stderr.write(f"{DISABLED}\n{ENABLE_HINT}\n")
        return 1
    try:
        server_id = load_or_create_server_id(home, env)
        keypair = rotate_keypair(home) if args.rotate else load_or_create_keypair(home)
    except (IdentityError, OSError) as exc:
        sys.stderr.write(f"paseo: error: {exc}\n")
        return 1
    offer = Offer(server_id, keypair.public_key_b64, settings.public_endpoint)
    url = encode_offer_url(offer, settings.app_base_url)
    try:
        parse_offer_url(url)  # an endpoint no client can dial is said here, not on the phone
    except OfferError as exc:
        sys.stderr.write(f"paseo: error: daemon.relay.publicEndpoint: {exc}\n")
        return 1
    qr = render_qr(url)
    if getattr(args, "output", "table") == "json":
        document = {"relayEnabled": True, "url": url, "qr": qr}
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(f"\nScan to pair:\n{qr}\n{url}\n")
    if args.rotate:
        sys.stderr.write("A new daemon keypair was made: offers printed before no longer work.\n")
    return 0
