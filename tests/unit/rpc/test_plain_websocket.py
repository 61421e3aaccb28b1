"""``paseo.client.plainws``, the light client's WebSocket, against websockets' own server:
fragmented, large and binary messages, pings, the close handshake, refusals."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from websockets.http11 import Response
from websockets.sync.server import ServerConnection, serve

from paseo.client.plainws import (
    ConnectionClosed,
    HandshakeError,
    HandshakeRefused,
    PlainWebSocket,
)


@contextmanager
def server(handler: Callable[[ServerConnection], None], **options: Any) -> Iterator[int]:
    """websockets' threading server on a loopback port running ``handler``; the port."""
    with serve(handler, "127.0.0.1", 0, compression=None, **options) as running:
        thread = threading.Thread(target=running.serve_forever, daemon=True)
        thread.start()
        try:
            yield running.socket.getsockname()[1]
        finally:
            running.shutdown()
            thread.join(10)


def dial(port: int, **options: Any) -> PlainWebSocket:
    return PlainWebSocket(host="127.0.0.1", port=port, host_header=f"127.0.0.1:{port}", **options)


def test_text_round_trips_of_every_length_class_and_a_clean_close() -> None:
    closed: list[int | None] = []

    def echo(ws: ServerConnection) -> None:
        for message in ws:
            ws.send(message)
        closed.append(ws.close_code)

    # One length per header form: 7-bit, 16-bit and 64-bit lengths, each masked by the client.
    texts = ["", "hé", "x" * 125, "y" * 126, "z" * 65535, "w" * 65536, "v" * 3_000_000]
    with server(echo, max_size=None) as port:
        ws = dial(port)
        for text in texts:
            ws.send(text)
            assert ws.recv(timeout=10) == text
        ws.close()
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=1)
    assert closed == [1000]


def test_fragmented_binary_and_pings_between_messages() -> None:
    def talk(ws: ServerConnection) -> None:
        ws.recv()
        ws.send(["part one, ", "part two, ", "the end"])  # a fragmented text message
        ws.ping(b"are you there")  # answered by the client while it waits for the next one
        ws.send(b"\x00\x01binary")
        ws.recv()

    with server(talk) as port:
        ws = dial(port, headers={"Authorization": "Bearer t"})
        ws.send("go")
        assert ws.recv(timeout=10) == "part one, part two, the end"
        assert ws.recv(timeout=10) == b"\x00\x01binary"
        ws.send("done")
        ws.close()


def test_a_server_close_ends_recv_and_a_timeout_leaves_the_stream_usable() -> None:
    def late(ws: ServerConnection) -> None:
        assert ws.recv() == "first"
        ws.send("answer")
        ws.recv()
        ws.close(4001, "bye")

    with server(late) as port:
        ws = dial(port)
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.05)
        ws.send("first")
        assert ws.recv(timeout=10) == "answer"
        ws.send("go away")
        with pytest.raises(ConnectionClosed, match="4001"):
            ws.recv(timeout=10)
        with pytest.raises(ConnectionClosed):
            ws.send("again")


def test_a_message_over_the_limit_closes_the_connection() -> None:
    def big(ws: ServerConnection) -> None:
        ws.send("x" * 2000)
        ws.recv()  # the client's close

    with server(big) as port:
        ws = dial(port, max_size=1000)
        with pytest.raises(ConnectionClosed, match="too big"):
            ws.recv(timeout=10)


def test_an_http_refusal_is_its_status() -> None:
    def refuse(connection: ServerConnection, request: Any) -> Response:
        return connection.respond(401, "no\n")

    with server(lambda ws: None, process_request=refuse) as port:
        with pytest.raises(HandshakeRefused) as info:
            dial(port)
        assert info.value.status == 401


def test_an_answer_that_is_not_a_websocket_upgrade_is_refused() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def answer() -> None:
            peer, _ = listener.accept()
            with peer:
                peer.recv(65536)
                peer.sendall(
                    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    b"Connection: Upgrade\r\nSec-WebSocket-Accept: wrong\r\n\r\n"
                )

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        with pytest.raises(HandshakeError, match="Accept"):
            dial(port, timeout=10)
        thread.join(10)


def test_nothing_listening_is_an_os_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    with pytest.raises(OSError):
        dial(port, timeout=5)


def test_a_unix_socket(tmp_path: Any) -> None:
    from websockets.sync.server import unix_serve

    path = str(tmp_path / "d.sock")

    def echo(ws: ServerConnection) -> None:
        for message in ws:
            ws.send(message)

    with unix_serve(echo, path, compression=None) as running:
        thread = threading.Thread(target=running.serve_forever, daemon=True)
        thread.start()
        try:
            ws = PlainWebSocket(unix_path=path, host_header="localhost")
            ws.send("over a unix socket")
            assert ws.recv(timeout=10) == "over a unix socket"
            ws.close()
        finally:
            running.shutdown()
            thread.join(10)
