"""``paseo relay serve [--listen ADDR]``: run a relay server people can host themselves,
wire-compatible with the TypeScript Paseo's Cloudflare relay (docs/relay.md, "Self-hosting").

It speaks plain ``ws``; put it behind a TLS proxy to offer ``wss``. It runs in the foreground
until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from paseo_hookspecs.address import AddressError, parse_address

from paseo_relay.relay_server import RelayLimits

DEFAULT_LISTEN = "127.0.0.1:8787"
"""Loopback, for a relay behind a reverse proxy; ``--listen 0.0.0.0:8787`` serves everyone."""


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20}
    lowered = text.strip().lower().removesuffix("b").removesuffix("i")
    scale = units.get(lowered[-1:], 1)
    digits = lowered[:-1] if lowered[-1:] in units else lowered
    if not digits.isdigit() or int(digits) < 1:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4MiB, 512KiB, 65536)")
    return int(digits) * scale


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="relay_command", metavar="COMMAND", required=True)
    serve = commands.add_parser(
        "serve",
        help="run a relay server (what `daemon.relay.endpoint` points at)",
        description="Run a relay server, wire-compatible with the TypeScript Paseo's relay: "
        "daemons dial it, apps and CLIs reach them through it, end to end encrypted.",
    )
    defaults = RelayLimits()
    serve.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        help=f"host:port to listen on (default {DEFAULT_LISTEN})",
    )
    serve.add_argument(
        "--max-frame",
        type=_size,
        default=defaults.max_frame,
        help="largest WebSocket message relayed (default 4MiB)",
    )
    serve.add_argument(
        "--max-sockets",
        type=_count,
        default=defaults.max_sockets,
        help=f"open sockets in all (default {defaults.max_sockets})",
    )
    serve.add_argument(
        "--max-servers",
        type=_count,
        default=defaults.max_servers,
        help=f"daemons (serverIds) served at once (default {defaults.max_servers})",
    )
    serve.add_argument(
        "--max-clients",
        type=_count,
        default=defaults.max_connections_per_server,
        help=f"client connections per daemon (default {defaults.max_connections_per_server})",
    )
    serve.set_defaults(run=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    try:
        address = parse_address(args.listen)
    except AddressError as exc:
        sys.stderr.write(f"paseo: error: --listen: {exc}\n")
        return 2
    if address.path is not None or address.host is None or address.port is None:
        sys.stderr.write("paseo: error: --listen takes host:port (a unix socket is not served)\n")
        return 2
    limits = RelayLimits(
        max_frame=args.max_frame,
        max_sockets=args.max_sockets,
        max_servers=args.max_servers,
        max_connections_per_server=args.max_clients,
    )
    try:
        return asyncio.run(_serve(address.host, address.port, limits))
    except KeyboardInterrupt:
        return 0


async def _serve(host: str, port: int, limits: RelayLimits) -> int:
    from paseo_relay.relay_http import start_relay

    try:
        server, _relay = await start_relay(host, port, limits)
    except OSError as exc:
        sys.stderr.write(f"paseo: error: cannot listen on {host}:{port}: {exc.strerror or exc}\n")
        return 1
    bound = server.sockets[0].getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    print(f"Relay listening on ws://{shown}:{bound[1]} (GET /health, /ws)", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        server.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), limits.close_timeout + 1)
    return 0
