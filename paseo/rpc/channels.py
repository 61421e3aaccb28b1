"""Serving a channel another transport carries (see :mod:`paseo_hookspecs.channels`).

The server admits the channel from the facts its transport observed, reads the first message
(bounded by the hello timeout), hands the channel to the first registered protocol claiming
that message, and otherwise serves it as one of its own JSON-RPC sessions. Routing on the first
message lets one tunnel carry this daemon's clients and the TypeScript Paseo's alike without
the carrying transport knowing either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from paseo_hookspecs.channels import ChannelClosed, ChannelProtocol, MessageChannel
from paseo_hookspecs.transport import Admission, Observed, PeerFacts, SessionLimits

from paseo.rpc.close_codes import CLOSE_HELLO_TIMEOUT, CLOSE_UNAUTHORIZED

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from paseo.rpc.session import Session

log = logging.getLogger("paseo.rpc")

CLOSE_TRY_AGAIN = 1013
"""Not accepting now (shutting down, at capacity): the client may retry later."""


async def serve_channel(
    channel: MessageChannel,
    facts: PeerFacts,
    *,
    limits: SessionLimits,
    admit: Callable[[PeerFacts], Awaitable[Admission]],
    protocols: Mapping[str, ChannelProtocol],
    open_session: Callable[[str, MessageChannel, Observed, SessionLimits], Session],
) -> None:
    """See :meth:`paseo_hookspecs.channels.ChannelHost.serve_channel`."""
    admission = await admit(facts)
    if not admission.admitted or admission.kind is None or admission.observed is None:
        if admission.status == 401:
            await channel.close(CLOSE_UNAUTHORIZED, "unauthorized")
        else:
            await channel.close(CLOSE_TRY_AGAIN, "the daemon is not accepting connections")
        return
    try:
        first = await asyncio.wait_for(channel.recv(), limits.hello_timeout)
    except TimeoutError:
        await channel.close(CLOSE_HELLO_TIMEOUT, "no message received in time")
        return
    except ChannelClosed:
        return
    for name, protocol in list(protocols.items()):
        try:
            claimed = protocol.claims(first)
        except Exception:  # a protocol's bug must not take the others down
            log.exception("channel protocol %s failed to read a first message", name)
            continue
        if claimed:
            try:
                await protocol.serve(
                    channel, first, kind=admission.kind, observed=admission.observed
                )
            except ChannelClosed:
                pass
            except Exception:
                log.exception("channel protocol %s failed", name)
                with contextlib.suppress(Exception):
                    await channel.close(1011, "internal error")
            return
    session = open_session(admission.kind, channel, admission.observed, limits)
    runner = asyncio.get_running_loop().create_task(session.run())
    try:
        message: str | bytes = first
        while True:
            session.receive(message)
            message = await channel.recv()
    except ChannelClosed:
        pass
    finally:
        session.connection_lost()
        with contextlib.suppress(asyncio.CancelledError):
            await runner


__all__ = ["serve_channel"]
