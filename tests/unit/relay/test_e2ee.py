"""The relay's E2EE framing against known answers computed by tweetnacl (the TypeScript
clients' library, 1.0.3 under node 20), and both ends of the handshake driven together."""

from __future__ import annotations

import base64
import json

import pytest
from nacl.public import Box, PrivateKey, PublicKey
from paseo_relay import e2ee

# tweetnacl: nacl.box.keyPair.fromSecretKey, nacl.box.before(daemonPub, clientSecret) and
# nacl.box.after(plaintext, NONCE, shared), framed as encrypted-channel.ts frames them.
DAEMON_SECRET = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="  # bytes 01..20
DAEMON_PUBLIC = "B6N8vBQgk8i3VdwbEOhstCY3StFqqFPtC9/AsrhtHHw="
CLIENT_SECRET = "//79/Pv6+fj39vX08/Lx8O/u7ezr6uno5+bl5OPi4eA="  # bytes ff..e0
CLIENT_PUBLIC = "Pry2khSTRNxU5YFgz5C+2e6h3RToHI6R3lV699ev2RU="
SHARED = "/+Urc1naPmgVmq0cBwe/SqtegC82gt2jwODMNrbf/jE="
NONCE = bytes(i * 7 % 256 for i in range(24))
TEXT = '{"type":"hello","clientId":"cli-1","protocolVersion":1} é'
TEXT_FRAME = (
    "AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qhHsWfxwm2Acg9k+ORFvf7PwrtH5L6FHizAvO9PGJ47ENBBF2ppc3D75yy"
    "WL8T0+xcBW1dFZejsBjp28A5WY5Rx+VuygIVYj/t+K4="
)
BINARY = bytes([0xFF, 0xFE, 0x00, 0x80, 0x01])
BINARY_FRAME = "AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qhSXDedvUfm4GFwLCDrJV3UY4xa2uL"
EMPTY_FRAME = "AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qhmSGIpGhwf14Pq0H0YDtyDw=="


def _daemon_key() -> PrivateKey:
    return e2ee.private_key_from_b64(DAEMON_SECRET)


def _client_key() -> PrivateKey:
    return e2ee.private_key_from_b64(CLIENT_SECRET)


def test_keys_and_the_shared_key_match_tweetnacl() -> None:
    daemon, client = _daemon_key(), _client_key()
    assert e2ee.export_public_key(daemon.public_key) == DAEMON_PUBLIC
    assert e2ee.export_public_key(client.public_key) == CLIENT_PUBLIC
    # box.before is symmetric: either end derives the same key.
    assert base64.b64encode(Box(client, daemon.public_key).shared_key()).decode() == SHARED
    assert base64.b64encode(Box(daemon, client.public_key).shared_key()).decode() == SHARED


@pytest.mark.parametrize(
    ("message", "frame"), [(TEXT, TEXT_FRAME), (BINARY, BINARY_FRAME), (b"", EMPTY_FRAME)]
)
def test_a_sealed_frame_is_byte_for_byte_tweetnacls(message: e2ee.Message, frame: str) -> None:
    box = Box(_client_key(), _daemon_key().public_key)
    assert e2ee.seal(box, message, NONCE) == frame
    # The daemon opens what the client sealed; the length is nonce + MAC + plaintext.
    opened = e2ee.open_frame(Box(_daemon_key(), _client_key().public_key), frame)
    size = len(message.encode() if isinstance(message, str) else message)
    assert len(base64.b64decode(frame)) == e2ee.OVERHEAD + size
    # Empty plaintext is valid UTF-8, so it is text, as TextDecoder says.
    assert opened == (message if message != b"" else "")


def test_utf8_plaintext_is_text_and_anything_else_is_bytes() -> None:
    box = Box(_daemon_key(), _client_key().public_key)
    assert isinstance(e2ee.open_frame(box, TEXT_FRAME), str)
    assert e2ee.open_frame(box, BINARY_FRAME) == BINARY


def test_url_safe_unpadded_and_bytes_frames_are_accepted() -> None:
    box = Box(_daemon_key(), _client_key().public_key)
    url_safe = TEXT_FRAME.replace("+", "-").replace("/", "_").rstrip("=")
    assert e2ee.open_frame(box, url_safe) == TEXT
    assert e2ee.open_frame(box, f"  {TEXT_FRAME}\n") == TEXT
    assert e2ee.open_frame(box, TEXT_FRAME.encode()) == TEXT


def test_a_tampered_short_or_foreign_frame_does_not_open() -> None:
    box = Box(_daemon_key(), _client_key().public_key)
    raw = bytearray(base64.b64decode(TEXT_FRAME))
    raw[-1] ^= 1
    with pytest.raises(e2ee.E2eeError, match="Decryption failed"):
        e2ee.open_frame(box, base64.b64encode(bytes(raw)).decode())
    with pytest.raises(e2ee.E2eeError, match="too short"):
        e2ee.open_frame(box, base64.b64encode(b"x" * 39).decode())
    with pytest.raises(e2ee.E2eeError, match="too short"):
        e2ee.open_frame(box, "not base64 at all!")
    stranger = Box(PrivateKey.generate(), _client_key().public_key)
    with pytest.raises(e2ee.E2eeError, match="Decryption failed"):
        e2ee.open_frame(stranger, TEXT_FRAME)


def test_the_handshake_frames_are_what_json_stringify_writes() -> None:
    assert e2ee.hello_frame(_client_key().public_key) == (
        '{"type":"e2ee_hello","key":"' + CLIENT_PUBLIC + '"}'
    )
    assert json.dumps({"type": "e2ee_ready"}, separators=(",", ":")) == e2ee.READY_FRAME
    key = e2ee.parse_hello(e2ee.hello_frame(_client_key().public_key))
    assert bytes(key) == bytes(_client_key().public_key)


@pytest.mark.parametrize(
    "frame",
    [
        "",
        "garbage",
        "[1,2]",
        '{"type":"e2ee_ready"}',
        '{"type":"e2ee_hello"}',
        '{"type":"e2ee_hello","key":"   "}',
        '{"type":"e2ee_hello","key":"AAAA"}',
        '{"type":"e2ee_hello","key":"%%%%"}',
        b"\xff\xfe",
    ],
)
def test_an_invalid_hello_is_a_handshake_error(frame: e2ee.Message) -> None:
    with pytest.raises(e2ee.HandshakeError):
        e2ee.parse_hello(frame)
    with pytest.raises(e2ee.HandshakeError):
        e2ee.ResponderChannel(_daemon_key()).receive(frame)


def test_an_offer_key_of_the_wrong_length_is_refused_before_any_socket() -> None:
    with pytest.raises(e2ee.HandshakeError, match="length"):
        e2ee.ClientChannel(base64.b64encode(b"k" * 31).decode())


def _pair() -> tuple[e2ee.ClientChannel, e2ee.ResponderChannel]:
    return (
        e2ee.ClientChannel(DAEMON_PUBLIC, key=_client_key()),
        e2ee.ResponderChannel(_daemon_key()),
    )


def test_client_and_daemon_complete_the_handshake_and_exchange_both_ways() -> None:
    client, daemon = _pair()
    assert client.retry_hello() == client.hello
    # Sends before ready are queued, in order, then flushed sealed when ready comes.
    assert client.send("first") is None
    assert client.send(BINARY) is None
    answer = daemon.receive(client.hello)
    assert answer == e2ee.Received(outgoing=(e2ee.READY_FRAME,), opened=True)
    opened = client.receive(e2ee.READY_FRAME)
    assert opened.opened
    assert client.is_open
    assert client.retry_hello() is None
    assert [daemon.receive(f).message for f in opened.outgoing] == ["first", BINARY]
    frame = daemon.send('{"type":"session"}')
    assert client.receive(frame).message == '{"type":"session"}'
    again = client.send("later")
    assert again is not None
    assert daemon.receive(again).message == "later"


def test_the_client_ignores_everything_but_ready_while_handshaking() -> None:
    client, _ = _pair()
    for frame in ("garbage", '{"type":"session"}', TEXT_FRAME, b"\x00"):
        assert client.receive(frame) == e2ee.Received()
    assert not client.is_open


def test_the_client_queue_keeps_the_newest_200() -> None:
    client, daemon = _pair()
    for i in range(e2ee.MAX_PENDING_SENDS + 5):
        client.send(str(i))
    daemon.receive(client.hello)
    flushed = client.receive(e2ee.READY_FRAME).outgoing
    assert [daemon.receive(f).message for f in flushed] == [
        str(i) for i in range(5, e2ee.MAX_PENDING_SENDS + 5)
    ]


def test_a_retried_hello_gets_ready_again_without_rekeying() -> None:
    client, daemon = _pair()
    daemon.receive(client.hello)
    # The client retried before it saw ready: the channel keeps its key.
    assert daemon.receive(client.hello) == e2ee.Received(outgoing=(e2ee.READY_FRAME,))
    client.receive(e2ee.READY_FRAME)
    sent = client.send("still the same key")
    assert sent is not None
    assert daemon.receive(sent).message == "still the same key"


def test_a_new_client_key_rekeys_the_channel() -> None:
    old, daemon = _pair()
    daemon.receive(old.hello)
    old.receive(e2ee.READY_FRAME)
    stale = old.send("from the old client")
    new = e2ee.ClientChannel(DAEMON_PUBLIC)
    assert daemon.receive(new.hello).outgoing == (e2ee.READY_FRAME,)
    new.receive(e2ee.READY_FRAME)
    sent = new.send("from the new client")
    assert sent is not None
    assert daemon.receive(sent).message == "from the new client"
    assert stale is not None
    with pytest.raises(e2ee.E2eeError, match="Decryption failed"):
        daemon.receive(stale)


def test_plaintext_after_the_handshake_is_fatal_but_stray_handshake_frames_are_not() -> None:
    client, daemon = _pair()
    daemon.receive(client.hello)
    client.receive(e2ee.READY_FRAME)
    assert client.receive(e2ee.READY_FRAME) == e2ee.Received()
    assert client.receive(client.hello) == e2ee.Received()
    assert daemon.receive(' {"type":"e2ee_ready"}') == e2ee.Received()
    for end in (client, daemon):
        with pytest.raises(e2ee.E2eeError, match="plaintext frame"):
            end.receive('{"type":"session","message":{}}')
    with pytest.raises(e2ee.E2eeError, match="plaintext frame"):
        daemon.receive('{"type":"e2ee_hello"}')
    with pytest.raises(e2ee.HandshakeError):
        daemon.receive('{"type":"e2ee_hello","key":"AAAA"}')


def test_a_hello_from_a_client_that_holds_the_wrong_daemon_key_opens_nothing() -> None:
    # A tampered offer: the client boxes for a key the daemon does not hold. The handshake
    # itself is plaintext and completes; the first box fails on the daemon.
    wrong = PrivateKey.generate().public_key
    client = e2ee.ClientChannel(e2ee.export_public_key(wrong))
    daemon = e2ee.ResponderChannel(_daemon_key())
    daemon.receive(client.hello)
    client.receive(e2ee.READY_FRAME)
    sent = client.send('{"type":"hello"}')
    assert sent is not None
    with pytest.raises(e2ee.E2eeError, match="Decryption failed"):
        daemon.receive(sent)
    assert isinstance(wrong, PublicKey)


def test_a_replayed_box_is_refused_by_either_end() -> None:
    # A relay could send a box it forwarded once again: a request would run twice.
    client, daemon = _pair()
    daemon.receive(client.hello)
    client.receive(e2ee.READY_FRAME)
    sent = client.send('{"jsonrpc":"2.0","id":1,"method":"agent.create"}')
    assert sent is not None
    assert daemon.receive(sent).message is not None
    with pytest.raises(e2ee.E2eeError, match="Replayed"):
        daemon.receive(sent)
    answer = daemon.send("answer")
    assert client.receive(answer).message == "answer"
    with pytest.raises(e2ee.E2eeError, match="Replayed"):
        client.receive(answer)
