"""The frame decoder and the dispatcher, in process, including a property-based fuzz."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paseo_hookspecs.transport import Observed, SessionLimits

from paseo.config import load_config
from paseo.daemon.methods import kernel_groups
from paseo.daemon.runtime import Daemon
from paseo.home import HomeLayout
from paseo.rpc.dispatch import Call, Rejection, decode_frame
from paseo.rpc.server import RpcServer
from paseo.rpc.session import Session
from paseo.services import ServiceRef


class _Recorder:
    """A channel that keeps what the session sends."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed: tuple[int, str] | None = None
        self._changed = asyncio.Event()

    async def send(self, text: str) -> None:
        self.sent.append(text)
        self._changed.set()

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)
        self._changed.set()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait (the caller bounds it) until ``predicate`` holds after a send or close."""
        while not predicate():
            self._changed.clear()
            await self._changed.wait()


class _Daemon:
    """The attributes of the daemon the RPC layer and the kernel methods read (the dispatcher
    is under test)."""

    status = Daemon.status

    def __init__(self, home: Path) -> None:
        self.layout = HomeLayout(home)
        self.rpc: RpcServer | None = None
        self.config_lock = asyncio.Lock()
        self.config = load_config(home / "config.json", env={}, home=home)
        self.local_credential = "credential"
        self.server_id = "srv_test"
        self.stop_requested = asyncio.Event()
        self.log = logging.getLogger("test")
        self.plugins = None
        self.started_monotonic = time.monotonic()
        self.home = home

    @property
    def store(self) -> Any:
        raise RuntimeError("no store in this test")

    def config_section(self, plugin_id: str) -> Any:
        return None


def _server(daemon: _Daemon) -> RpcServer:
    """An RPC server over the fake daemon, as the composition root would build it."""
    server = RpcServer(
        daemon,  # type: ignore[arg-type]
        config=daemon.config,
        local_credential=daemon.local_credential,
        status=daemon.status,  # type: ignore[arg-type]
    )
    daemon.rpc = server
    return server


def test_decode_frame_cases() -> None:
    call = decode_frame('{"jsonrpc":"2.0","id":"a","method":"x.y","params":{"k":1}}')
    assert call == Call("a", "x.y", {"k": 1}, False)
    note = decode_frame('{"jsonrpc":"2.0","method":"x.y"}')
    assert isinstance(note, Call)
    assert note.notification
    for text, code in [
        ("nope", "parse_error"),
        ("[" * 100_000, "parse_error"),
        ('{"id":' + "1" * 10_000 + "}", "parse_error"),
        ("[]", "invalid_request"),
        ("null", "invalid_request"),
        ('{"jsonrpc":"2.0","id":1.5,"method":"a"}', "invalid_request"),
        ('{"jsonrpc":"2.0","id":1,"method":""}', "invalid_request"),
        ('{"jsonrpc":"2.0","id":1,"method":"a","params":3}', "invalid_params"),
    ]:
        rejected = decode_frame(text)
        assert isinstance(rejected, Rejection), text
        assert rejected.error.code == code, text


async def _exchange(home: Path, frames: list[str | bytes], hello: bool) -> _Recorder:
    daemon = _Daemon(home)
    server = _server(daemon)
    ref: ServiceRef[Any] = ServiceRef("daemon")
    ref.bind(daemon)
    for group in kernel_groups(ref):
        server.methods.add_group(group, "kernel")
    channel = _Recorder()
    session = server.open_session(
        kind="local",
        channel=channel,
        observed=Observed("test", False, "127.0.0.1", "127.0.0.1", None),
        limits=SessionLimits(),
    )
    runner = asyncio.get_running_loop().create_task(session.run())
    if hello:
        session.receive(
            '{"jsonrpc":"2.0","id":"h","method":"server.hello","params":{"clientId":"f"}}'
        )
    for frame in frames:
        session.receive(frame)
    session.receive('{"jsonrpc":"2.0","id":"last","method":"server.ping","params":{"data":"ok"}}')
    async with asyncio.timeout(10):
        await session.drain_calls()
        await channel.until(
            lambda: channel.closed is not None or any('"id":"last"' in s for s in channel.sent)
        )
    session.connection_lost()
    await runner
    return channel


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
request_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
        "id": st.one_of(st.integers(), st.text(max_size=5), st.none(), st.booleans()),
        "method": st.one_of(
            st.sampled_from(
                [
                    "server.ping",
                    "server.status",
                    "server.hello",
                    "config.get",
                    "server.subscribe",
                    "server.unsubscribe",
                    "nope",
                    "",
                ]
            ),
            st.text(max_size=10),
        ),
        "params": json_values,
    },
).map(json.dumps)
frames = st.lists(
    st.one_of(request_like, st.text(max_size=40), json_values.map(json.dumps)), max_size=12
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=frames, hello=st.booleans())
def test_fuzzed_frames_always_get_well_formed_answers(
    tmp_path: Path, batch: list[str], hello: bool
) -> None:
    channel = asyncio.run(_exchange(tmp_path, batch, hello))
    assert channel.closed is None  # text frames never close the connection
    answers = [json.loads(text) for text in channel.sent]
    for message in answers:
        assert message["jsonrpc"] == "2.0"
        if "error" in message:
            assert isinstance(message["error"]["data"]["code"], str)
            assert isinstance(message["error"]["code"], int)
        else:
            assert "result" in message or "method" in message
    # The session still works after anything: the final ping is answered.
    last = next(m for m in answers if m.get("id") == "last")
    if hello or any('"server.hello"' in f for f in batch):
        assert "result" in last or last["error"]["data"]["code"] == "hello_required"
    else:
        assert last["error"]["data"]["code"] == "hello_required"


def test_binary_frame_closes_with_1003(tmp_path: Path) -> None:
    channel = asyncio.run(_exchange(tmp_path, [b"\x00"], True))
    assert channel.closed is not None
    assert channel.closed[0] == 1003


def test_overflow_replaces_the_queue_with_a_resync(tmp_path: Path) -> None:
    async def run() -> list[dict[str, Any]]:
        daemon = _Daemon(tmp_path)
        server = _server(daemon)
        channel = _Recorder()
        session = Session(
            server,
            kind="local",
            channel=channel,
            observed=Observed("test", False, None, None, None),
            limits=SessionLimits(outbound_queue=5),
        )
        session.subscriptions.add("config")
        server.sessions.add(session)
        for _ in range(7):  # the writer has not run yet: the queue overflows once
            server.publish("config", "config.changed", {"n": 1})
        runner = asyncio.get_running_loop().create_task(session.run())
        async with asyncio.timeout(5):
            await channel.until(lambda: len(channel.sent) >= 3)
        session.connection_lost()
        await runner
        return [json.loads(text) for text in channel.sent]

    sent = asyncio.run(run())
    assert sent[0]["method"] == "server.resync"
    assert sent[0]["params"]["streams"] == ["config"]
    assert sent[0]["params"]["stream"] == "session"
    # What follows continues the stream, so the client sees the gap in config's seq.
    assert [m["params"]["seq"] for m in sent[1:]] == [6, 7]


def test_lone_surrogates_are_refused_on_the_way_in_and_escaped_on_the_way_out() -> None:
    from paseo.rpc.dispatch import encode_error, encode_notification, encode_result
    from paseo.rpc.models import PingResult

    bad_id = decode_frame('{"jsonrpc":"2.0","id":"\\ud800","method":"x"}')
    assert isinstance(bad_id, Rejection)
    assert (bad_id.id, bad_id.error.code) == (None, "invalid_request")
    bad_key = decode_frame('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[{"\\udc80":1}]}}')
    assert isinstance(bad_key, Rejection)
    assert (bad_key.id, bad_key.error.code) == (1, "invalid_params")
    assert bad_key.error.data["path"] == "params.a[0].\\udc80"
    # A proper pair is one character, and an escaped backslash is no surrogate.
    assert isinstance(
        decode_frame('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\\ud83d\\ude00"}}'), Call
    )
    assert isinstance(
        decode_frame('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\\\\ud800"}}'), Call
    )
    # Text from the system (a non-UTF-8 file name) still makes a frame that encodes as UTF-8.
    frames = [
        encode_result(1, {"path": "/tmp/\udc80"}),
        encode_result(1, PingResult(data="\udc80", time=0.0)),
        encode_error(1, bad_key.error),
        encode_notification("x.y", {"name": "\ud800"}),
    ]
    for frame in frames:
        frame.encode("utf-8")
        assert json.loads(frame)
