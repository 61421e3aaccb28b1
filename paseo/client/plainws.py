"""A minimal synchronous WebSocket client (RFC 6455) over a plain socket, for one-shot calls.

:class:`paseo.client.light.LightClient` (``paseo ls``, ``paseo project``, the doctor's probes)
opens one connection, makes a few calls and exits. websockets' threading client costs more to
import than the whole call takes: it reads ``importlib.metadata`` and imports ``ssl``,
``urllib.request`` (for proxies) and ``http``'s email parser. This speaks just what the daemon's
endpoint needs: a loopback or unix-socket upgrade with a bearer token, unfragmented or
fragmented text frames, pings answered, a clean close. No extension is offered (the daemon's
``permessage-deflate`` applies only to clients that ask for it), no TLS (addresses are
``ws://`` or unix sockets), no proxy.

Standard library only, and its cheapest corners: ``_socket`` (the C module ``socket`` wraps:
``socket`` adds enums, ``selectors`` and ``array``, none of which a few frames need),
``os``, ``binascii``. A host name (not an IP literal) goes through ``socket.create_connection``
as usual.
"""

from __future__ import annotations

import _socket
import binascii
import contextlib
import os
import time
from collections.abc import Mapping
from typing import Any

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
"""RFC 6455's constant for ``Sec-WebSocket-Accept``."""
MAX_HEAD = 64 * 1024
"""The longest upgrade answer (status line and headers) accepted."""

OP_CONTINUATION, OP_TEXT, OP_BINARY = 0x0, 0x1, 0x2
OP_CLOSE, OP_PING, OP_PONG = 0x8, 0x9, 0xA


class ConnectionClosed(Exception):
    """The connection ended (the daemon closed it, or the socket failed)."""


class HandshakeRefused(Exception):
    """The server answered the upgrade with an HTTP status other than 101."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class HandshakeError(OSError):
    """The server's answer to the upgrade is not a WebSocket one."""


def _accept_for(key: bytes) -> bytes:
    """The ``Sec-WebSocket-Accept`` a server must answer ``key`` with (RFC 6455 names SHA-1
    for this check; it is no security measure)."""
    sha1: Any
    try:
        # The built-in SHA-1: hashlib loads OpenSSL's library (5 ms here) for one digest.
        from _sha1 import sha1  # type: ignore[import-not-found,no-redef]
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import sha1
    digest: bytes = sha1(key + GUID).digest()  # noqa: S324 - the RFC's check, not security
    return binascii.b2a_base64(digest, newline=False)


def _ip_family(host: str) -> int | None:
    """``AF_INET`` / ``AF_INET6`` for an IP literal, ``None`` for a name."""
    for family in (_socket.AF_INET, _socket.AF_INET6):
        try:
            _socket.inet_pton(family, host)
        except OSError:
            continue
        return family
    return None


def _open(host: str | None, port: int | None, unix_path: str | None, timeout: float) -> Any:
    """A connected stream socket (``_socket.socket`` or, for a host name, ``socket.socket``)."""
    target: str | tuple[str, int]
    if unix_path is not None:
        family, target = _socket.AF_UNIX, unix_path
    else:
        assert host is not None
        assert port is not None
        literal = _ip_family(host)
        if literal is None:
            # A name: resolve it as every client does (IPv4 or IPv6, each address in turn).
            import socket

            sock = socket.create_connection((host, port), timeout=timeout)
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            return sock
        family, target = literal, (host, port)
    raw = _socket.socket(family, _socket.SOCK_STREAM)
    try:
        raw.settimeout(timeout)
        raw.connect(target)
        if family != _socket.AF_UNIX:
            raw.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
    except BaseException:
        raw.close()
        raise
    return raw


def _mask(payload: bytes, key: bytes) -> bytes:
    """``payload`` XOR the repeated 4-byte ``key``, as one big-integer operation (a Python
    loop over the bytes would cost a second per megabyte)."""
    if not payload:
        return payload
    size = len(payload)
    pad = (key * (size // 4 + 1))[:size]
    value = int.from_bytes(payload, "big") ^ int.from_bytes(pad, "big")
    return value.to_bytes(size, "big")


class PlainWebSocket:
    """A connected, upgraded WebSocket; :meth:`send` text, :meth:`recv` a message, :meth:`close`.

    Raises :class:`OSError` (or :class:`TimeoutError`) when the socket cannot be opened,
    :class:`HandshakeRefused` for an HTTP refusal, :class:`HandshakeError` for an answer that is
    not an upgrade.
    """

    def __init__(
        self,
        *,
        host: str | None = None,
        port: int | None = None,
        unix_path: str | None = None,
        host_header: str,
        path: str = "/ws",
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        max_size: int = 64 * 1024 * 1024,
    ) -> None:
        self.max_size = max_size
        self._buffer = bytearray()
        self._closed = False
        deadline = time.monotonic() + timeout
        self._sock = _open(host, port, unix_path, timeout)
        sock = self._sock
        try:
            self._handshake(host_header, path, headers or {}, deadline)
        except BaseException:
            sock.close()
            raise

    def _handshake(
        self, host_header: str, path: str, headers: Mapping[str, str], deadline: float
    ) -> None:
        key = binascii.b2a_base64(os.urandom(16), newline=False)
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {host_header}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key.decode('ascii')}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        while b"\r\n\r\n" not in self._buffer:
            if len(self._buffer) > MAX_HEAD:
                raise HandshakeError("the upgrade answer's headers are too long")
            self._fill(deadline)
        head, _, rest = bytes(self._buffer).partition(b"\r\n\r\n")
        self._buffer = bytearray(rest)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise HandshakeError(f"not an HTTP answer: {status_line[:80]!r}")
        status = int(parts[1])
        if status != 101:
            raise HandshakeRefused(status)
        answer: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            answer[name.strip().lower()] = value.strip()
        if answer.get("upgrade", "").lower() != "websocket":
            raise HandshakeError("the answer does not upgrade to a WebSocket")
        if answer.get("sec-websocket-accept", "").encode("latin-1") != _accept_for(key):
            raise HandshakeError("the answer's Sec-WebSocket-Accept does not match")
        if answer.get("sec-websocket-extensions"):
            raise HandshakeError("the server chose an extension this client did not offer")

    def _fill(self, deadline: float | None) -> None:
        """Append what the socket has to the buffer, waiting until ``deadline`` at most
        (a bytearray: a large message arrives in many reads)."""
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            self._sock.settimeout(left)
        else:
            self._sock.settimeout(None)
        try:
            chunk = self._sock.recv(1 << 18)
        except TimeoutError:
            raise
        except OSError as exc:
            self._closed = True
            raise ConnectionClosed(str(exc)) from None
        if not chunk:
            self._closed = True
            raise ConnectionClosed("the server closed the connection")
        self._buffer += chunk

    def _frame(self, deadline: float | None) -> tuple[bool, int, bytes]:
        """The next frame: (final, opcode, unmasked payload). Nothing is taken from the buffer
        until the whole frame is in it, so a timeout leaves the stream where it was."""
        while True:
            buffer = self._buffer
            if len(buffer) >= 2:
                first, second = buffer[0], buffer[1]
                if first & 0x70:
                    raise self._fail(1002, "a frame has reserved bits set")
                length, start = second & 0x7F, 2
                if length == 126 and len(buffer) >= 4:
                    length, start = int.from_bytes(buffer[2:4], "big"), 4
                elif length == 127 and len(buffer) >= 10:
                    length, start = int.from_bytes(buffer[2:10], "big"), 10
                if length > self.max_size:
                    raise self._fail(1009, "message too big")
                if start > 2 or length < 126:
                    masked = bool(second & 0x80)
                    end = start + (4 if masked else 0) + length
                    if len(buffer) >= end:
                        payload = bytes(buffer[end - length : end])
                        if masked:
                            payload = _mask(payload, bytes(buffer[start : start + 4]))
                        del buffer[:end]
                        return bool(first & 0x80), first & 0x0F, payload
            self._fill(deadline)

    def _fail(self, code: int, reason: str) -> ConnectionClosed:
        """Close with ``code`` (best effort); the error to raise."""
        self._send_close(code, reason)
        self._drop()
        return ConnectionClosed(reason)

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        size = len(payload)
        if size < 126:
            head = bytes((0x80 | opcode, 0x80 | size))
        elif size < 1 << 16:
            head = bytes((0x80 | opcode, 0x80 | 126)) + size.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + size.to_bytes(8, "big")
        key = os.urandom(4)
        try:
            self._sock.sendall(head + key + _mask(payload, key))
        except OSError as exc:
            self._closed = True
            raise ConnectionClosed(str(exc)) from None

    def _send_close(self, code: int, reason: str = "") -> None:
        if self._closed:
            return
        with contextlib.suppress(ConnectionClosed):
            self._send_frame(OP_CLOSE, code.to_bytes(2, "big") + reason.encode("utf-8")[:120])

    def send(self, text: str) -> None:
        """Send ``text`` as one text frame."""
        if self._closed:
            raise ConnectionClosed("the connection is closed")
        self._send_frame(OP_TEXT, text.encode("utf-8"))

    def recv(self, timeout: float | None = None) -> str | bytes:
        """The next message (``str`` for text, ``bytes`` for binary); raises
        :class:`TimeoutError` after ``timeout`` seconds, :class:`ConnectionClosed` when the
        connection ends."""
        if self._closed:
            raise ConnectionClosed("the connection is closed")
        deadline = None if timeout is None else time.monotonic() + timeout
        parts: list[bytes] = []
        kind: int | None = None
        while True:
            fin, opcode, payload = self._frame(deadline)
            if opcode == OP_PING:
                self._send_frame(OP_PONG, payload)
                continue
            if opcode == OP_PONG:
                continue
            if opcode == OP_CLOSE:
                # Answer the close (the handshake's second half) and end.
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                self._send_close(code if code not in (1005, 1006) else 1000)
                self._drop()
                raise ConnectionClosed(f"closed by the server ({code})")
            if opcode == OP_CONTINUATION:
                if kind is None:
                    raise self._fail(1002, "a continuation frame with nothing to continue")
            elif opcode in (OP_TEXT, OP_BINARY):
                if kind is not None:
                    raise self._fail(1002, "a new message inside a fragmented one")
                kind = opcode
            else:
                raise self._fail(1002, f"unknown opcode {opcode}")
            parts.append(payload)
            if sum(len(part) for part in parts) > self.max_size:
                raise self._fail(1009, "message too big")
            if fin:
                data = b"".join(parts)
                if kind == OP_BINARY:
                    return data
                try:
                    return data.decode("utf-8")
                except UnicodeDecodeError:
                    raise self._fail(1007, "a text message that is not UTF-8") from None

    def close(self, timeout: float = 1.0) -> None:
        """Close cleanly: send a close frame and wait (``timeout`` at most) for the server's."""
        if self._closed:
            self._drop()
            return
        self._send_close(1000)
        deadline = time.monotonic() + timeout
        try:
            while True:
                _fin, opcode, _payload = self._frame(deadline)
                if opcode == OP_CLOSE:
                    break
        except (ConnectionClosed, OSError):
            pass
        self._drop()

    def _drop(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.close()
