"""A recording proxy that refuses everything: proof that an agent tried to reach nothing else.

Point ``HTTPS_PROXY``/``HTTP_PROXY`` (and the lower-case spellings) of an agent at
:attr:`RefusingProxy.url` and exempt the fake model server with ``NO_PROXY=127.0.0.1,localhost``.
Any attempt to reach another host then arrives here — a ``CONNECT host:443`` for HTTPS, an
absolute-URI request for plain HTTP — is recorded in :attr:`RefusingProxy.attempts` and answered
``403`` so the agent fails fast instead of waiting for a network that is not there.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable
from urllib.parse import urlsplit

from ._http import MAX_HEADER_BYTES, BadRequest, ResponseWriter
from ._lifecycle import LoopServer


def _target_host(attempt: str) -> str | None:
    """The host of ``"CONNECT host:443"`` or ``"GET http://host/path"``."""
    _, _, target = attempt.partition(" ")
    if "://" in target:
        return urlsplit(target).hostname
    host, _, _ = target.rpartition(":")
    return host or None


class RefusingProxy(LoopServer):
    """Records ``"METHOD target"`` for every proxied attempt and refuses it with 403."""

    thread_name = "refusing-proxy"

    def __init__(self, host: str = "127.0.0.1", *, expected: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.host = host
        self.port = 0
        self.expected = expected
        """Attempts a program is known to make (refused all the same): kept in
        :attr:`expected_attempts` instead of :attr:`attempts`, so a test can prove both that
        they were refused and that nothing else was tried."""
        self._attempts: list[str] = []
        self._expected_seen: list[str] = []
        self._lock = threading.Lock()
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        """The proxy URL for ``HTTPS_PROXY``/``HTTP_PROXY``."""
        return f"http://{self.host}:{self.port}"

    @property
    def attempts(self) -> list[str]:
        """Every refused attempt so far, e.g. ``"CONNECT api.example.com:443"``."""
        with self._lock:
            return list(self._attempts)

    @property
    def expected_attempts(self) -> list[str]:
        """The refused attempts that were among :attr:`expected`."""
        with self._lock:
            return list(self._expected_seen)

    def unexpected(self, known_hosts: Iterable[str] = ()) -> list[str]:
        """The attempts aimed anywhere but ``known_hosts``: hosts a program is known to try
        whatever it is told (omp's model catalogues at start-up). Those are refused too; the
        caller proves they were tried and nothing else was."""
        known = set(known_hosts)
        return [a for a in self.attempts if _target_host(a) not in known]

    def proxy_env(self) -> dict[str, str]:
        """Environment variables routing an agent's outbound traffic here (loopback exempt)."""
        no_proxy = "127.0.0.1,localhost,::1"
        return {
            "HTTPS_PROXY": self.url,
            "https_proxy": self.url,
            "HTTP_PROXY": self.url,
            "http_proxy": self.url,
            "ALL_PROXY": self.url,
            "all_proxy": self.url,
            "NO_PROXY": no_proxy,
            "no_proxy": no_proxy,
        }

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await _request_head(reader)
            if not head.strip():
                # Opened and dropped without a word (a program killed mid-start-up): it named
                # no destination, so it reached nothing.
                return
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, _, rest = line.partition(" ")
            target = rest.partition(" ")[0]
            if not (method.isalpha() and method.isupper() and target):
                # Not HTTP (a SOCKS client via ALL_PROXY, say): the bytes are the evidence.
                attempt = "non-HTTP connection"
            else:
                # A request line, whole or cut off by a reset: where it wanted to go is said.
                attempt = f"{method} {target}"
            with self._lock:
                seen = self._expected_seen if attempt in self.expected else self._attempts
                seen.append(attempt)
            if b"\r\n\r\n" in head:
                await ResponseWriter(reader, writer, keep_alive=False, head_only=False).send(
                    403, b"outbound traffic is refused in tests\n", "text/plain"
                )
        except (BadRequest, ConnectionError):
            pass  # the peer went away while being refused: its attempt is recorded already
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


    async def start(self) -> None:
        """Listen on the running loop."""
        self._server = await asyncio.start_server(self._serve, self.host, 0, limit=MAX_HEADER_BYTES)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

async def _request_head(reader: asyncio.StreamReader) -> bytes:
    """The bytes up to the end of the request head, or what arrived before the peer closed or
    reset the connection (a client killed mid-request still named where it was going)."""
    head = b""
    with contextlib.suppress(ConnectionError):
        while b"\r\n\r\n" not in head:
            chunk = await reader.read(4096)
            if not chunk:
                break
            head += chunk
            if len(head) > MAX_HEADER_BYTES:
                raise BadRequest("request head too large")
    return head
