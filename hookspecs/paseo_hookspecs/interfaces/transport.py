"""Transports carry client connections into the daemon."""

from __future__ import annotations

from abc import ABC, abstractmethod

from paseo_hookspecs.transport import TransportHost


class Transport(ABC):
    """A listener (TCP, unix socket, relay, …) that hands each connection to the daemon.

    ``start`` must not return before the listener accepts connections; ``stop`` closes the
    listener and every connection it opened, then returns. Everything a transport needs from
    the daemon — admission decisions, sessions, limits, the health and status answers — comes
    through the :class:`~paseo_hookspecs.transport.TransportHost` given to ``start``.

    Implement and register a transport::

        from paseo_hookspecs import hookimpl
        from paseo_hookspecs.address import parse_address
        from paseo_hookspecs.interfaces.transport import Transport
        from paseo_hookspecs.transport import PeerFacts, SessionLimits, TransportHost

        class LineTransport(Transport):
            name = "lines"

            async def start(self, host: TransportHost) -> list[str]:
                self._host = host
                address = parse_address(host.listen)
                self._server = await asyncio.start_server(self._serve, address.host, address.port)
                return [f"tcp://{address.listen_form()}"]

            async def _serve(self, reader, writer) -> None:
                facts = PeerFacts("lines", False, writer.get_extra_info("peername")[0],
                                  credential=(await reader.readline()).decode().strip())
                admission = await self._host.admit(facts, "session")
                if not admission.admitted:
                    writer.close()
                    return
                session = self._host.open_session(
                    kind=admission.kind, channel=LineChannel(writer),
                    observed=admission.observed, limits=SessionLimits(),
                )
                ...  # feed session.receive(line) per line; session.connection_lost() at EOF

            async def stop(self) -> None:
                self._server.close()
                await self._server.wait_closed()

        @hookimpl
        def paseo_register_transports(register):
            register(LineTransport())
    """

    name: str
    """Unique transport name (``websocket``, …)."""

    typescript_discovery: bool = False
    """``True`` for a transport serving the TypeScript Paseo protocol: its first unix-socket
    address is recorded as ``listen`` in ``paseo.pid`` (the key the TypeScript CLI reads),
    while this daemon's own clients find the JSON-RPC address under ``rpcListen``."""

    @abstractmethod
    async def start(self, host: TransportHost) -> list[str]:
        """Start listening; return the addresses clients can use (``ws://127.0.0.1:6767/ws``).

        Raise :class:`OSError` when the listener cannot be opened (the daemon refuses to start
        and shows the message).
        """

    @abstractmethod
    async def stop(self) -> None:
        """Stop accepting, close open connections, release the listener."""


__all__ = ["Transport", "TransportHost"]
