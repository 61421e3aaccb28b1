"""A frame nested deeper than anything the protocol needs is dropped like other malformed frames,
on the real daemon: the connection serves on (after hello) or is refused as a bad first frame
(before it), never closed with 1011 after a traceback in the daemon's log."""

from __future__ import annotations

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.e2e

DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH


def _deep_message(levels: int) -> str:
    """A session message whose payload parses but nests ``levels`` objects deep."""
    return '{"type":"session","message":{"type":"ping","requestId":"r","x":' + (
        '{"a":' * levels + "1" + "}" * levels + "}}"
    )


def test_a_deep_frame_after_hello_is_dropped_and_the_connection_serves_on(
    ts_daemon: TsDaemon,
) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_deep")
        client.ws.send(DEEP)
        client.ws.send(_deep_message(900))
        pong = client.request("ping", "pong", clientSentAt=1)
        assert pong["clientSentAt"] == 1
    log = (ts_daemon.home / "daemon.log").read_text(errors="replace")
    assert "RecursionError" not in log
    assert "Traceback" not in log


def test_a_deep_first_frame_is_refused_as_a_bad_first_frame(ts_daemon: TsDaemon) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.ws.send(DEEP)
        with pytest.raises(ConnectionClosed) as closed:
            client.receive(timeout=10)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4002
