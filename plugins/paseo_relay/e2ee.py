"""The end-to-end encryption of a relayed connection, exactly as the TypeScript clients frame it
(``packages/relay/src/crypto.ts``, ``encrypted-channel.ts``, ``base64.ts`` in getpaseo/paseo).

No I/O here: the channels take the frames a socket received and return the frames to send, so
the relay client (our CLI), the daemon's relay transport and the tests drive the same code.

- Keys are X25519 (NaCl box). The daemon's long-term pair is ``daemon-keypair.json``; the
  client makes a fresh pair per connection and learns the daemon's public key from the offer.
- The handshake is plaintext text frames: the client sends ``{"type":"e2ee_hello","key":…}``
  (its public key, standard base64) on open and again every second until it hears exactly
  ``{"type":"e2ee_ready"}``; it queues up to 200 sends meanwhile.
- Every later frame is a text frame ``base64(nonce[24] || box)``, one box per message, standard
  alphabet with padding; url-safe and unpadded input is accepted. Decrypted bytes that are valid
  UTF-8 are a text message, anything else a binary one.
- A box that does not open, or a JSON-looking frame other than hello/ready once the channel is
  open, is fatal: the socket is closed with :data:`CLOSE_CODE` and the error's text.

The crypto is PyNaCl's (libsodium): ``Box(PrivateKey(ours), PublicKey(peer))`` is
``nacl.box.before(peerPub, ourSecret)`` and ``Box.encrypt`` already returns ``nonce || box``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from nacl.exceptions import CryptoError
from nacl.public import Box, PrivateKey, PublicKey

KEY_BYTES = 32
NONCE_BYTES = 24
MAC_BYTES = 16
OVERHEAD = NONCE_BYTES + MAC_BYTES
"""What a box adds to its plaintext (before base64)."""

HANDSHAKE_RETRY_SECONDS = 1.0
"""The client resends its hello this often until the daemon answers ready."""
MAX_PENDING_SENDS = 200
"""Sends a client queues while handshaking; past it the oldest is dropped (as TypeScript)."""
CLOSE_CODE = 1011
"""The close code of every E2EE failure."""
HANDSHAKE_FAILED = "E2EE handshake failed"
"""The daemon's close reason for a first frame that is not a valid hello."""
PLAINTEXT_ON_ENCRYPTED = "Received plaintext frame on encrypted channel"
DECRYPTION_FAILED = "Decryption failed"
REPLAYED = "Replayed frame"
REPLAY_WINDOW = 8192
"""Boxes whose nonces each end remembers to refuse a replay (about 1 MB per connection)."""

READY_FRAME = '{"type":"e2ee_ready"}'
"""The daemon's answer to a hello, byte for byte as ``JSON.stringify`` writes it."""

Message = str | bytes
"""An application message: text, or bytes that are not UTF-8 (terminal streams)."""


class E2eeError(Exception):
    """A fatal E2EE failure; its text is the close reason (close with :data:`CLOSE_CODE`)."""


class HandshakeError(E2eeError):
    """The peer's handshake frame is invalid (a bad hello, a key of the wrong length)."""


# ------------------------------------------------------------------ base64 and keys


def encode_b64(data: bytes) -> str:
    """Standard base64 with padding, as base64-js ``fromByteArray`` writes it."""
    return base64.b64encode(data).decode("ascii")


def decode_b64(text: str) -> bytes:
    """Standard or url-safe base64, padded or not (``base64ToArrayBuffer``); raises
    :class:`ValueError` on anything else."""
    standard = text.strip().replace("-", "+").replace("_", "/")
    standard += "=" * (-len(standard) % 4)
    try:
        return base64.b64decode(standard, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not base64: {exc}") from None


def import_public_key(text: str) -> PublicKey:
    """A peer's public key from base64; :class:`HandshakeError` unless it is 32 bytes."""
    try:
        raw = decode_b64(text)
    except ValueError:
        raise HandshakeError("Invalid public key: not base64") from None
    if len(raw) != KEY_BYTES:
        raise HandshakeError(f"Invalid public key length (expected {KEY_BYTES})")
    return PublicKey(raw)


def export_public_key(key: PublicKey) -> str:
    return encode_b64(bytes(key))


def private_key_from_b64(text: str) -> PrivateKey:
    """A secret key as ``daemon-keypair.json`` stores it (``secretKeyB64``)."""
    raw = decode_b64(text)
    if len(raw) != KEY_BYTES:
        raise ValueError(f"Invalid secret key length (expected {KEY_BYTES})")
    return PrivateKey(raw)


# ------------------------------------------------------------------ handshake frames


def hello_frame(public_key: PublicKey) -> str:
    """``{"type":"e2ee_hello","key":"<std b64>"}`` in ``JSON.stringify``'s key order."""
    return json.dumps(
        {"type": "e2ee_hello", "key": export_public_key(public_key)}, separators=(",", ":")
    )


def _json_object(frame: Message) -> dict[str, Any] | None:
    text = frame if isinstance(frame, str) else frame.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def parse_hello(frame: Message) -> PublicKey:
    """The client's public key from its hello; :class:`HandshakeError` for anything else."""
    parsed = _json_object(frame)
    key = parsed.get("key") if parsed is not None else None
    if parsed is None or parsed.get("type") != "e2ee_hello" or not isinstance(key, str):
        raise HandshakeError(_describe_invalid_hello(frame, parsed))
    if not key.strip():
        raise HandshakeError(_describe_invalid_hello(frame, parsed))
    return import_public_key(key)


def is_ready(frame: Message) -> bool:
    """Whether ``frame`` is the daemon's ready (any JSON object of type ``e2ee_ready``)."""
    parsed = _json_object(frame)
    return parsed is not None and parsed.get("type") == "e2ee_ready"


def _describe_invalid_hello(frame: Message, parsed: dict[str, Any] | None) -> str:
    # As buildInvalidHelloError: the type seen and a short preview, never the whole frame.
    kind = parsed.get("type") if parsed is not None else None
    missing = "undefined" if kind is None else type(kind).__name__
    shown = kind if isinstance(kind, str) else missing
    text = frame if isinstance(frame, str) else frame.decode("utf-8", errors="replace")
    compact = " ".join(text.split())
    preview = compact if len(compact) <= 160 else compact[:157] + "..."
    has_key = parsed is not None and isinstance(parsed.get("key"), str)
    return (
        f"Invalid hello message (receivedType={shown}, hasKey={str(has_key).lower()}, "
        f"preview={json.dumps(preview)})"
    )


# ------------------------------------------------------------------ boxes


def seal(box: Box, message: Message, nonce: bytes | None = None) -> str:
    """One message as one text frame: ``base64(nonce || box)``. ``nonce`` is for known-answer
    tests only; by default a fresh random one is used, as every sender must."""
    data = message.encode("utf-8") if isinstance(message, str) else bytes(message)
    sealed = box.encrypt(data) if nonce is None else box.encrypt(data, nonce)
    return encode_b64(bytes(sealed))


def open_frame(box: Box, frame: Message) -> Message:
    """The message a sealed frame carries: text when the plaintext is UTF-8, else bytes.
    Raises :class:`E2eeError` (``Decryption failed``) for a frame that does not open."""
    return _open_with_nonce(box, frame)[1]


def _open_with_nonce(box: Box, frame: Message) -> tuple[bytes, Message]:
    try:
        text = frame if isinstance(frame, str) else frame.decode("utf-8")
        bundle = decode_b64(text)
    except (UnicodeDecodeError, ValueError):
        # Some sockets deliver the base64 text as bytes; anything else is taken as the raw
        # bundle, which then has to open on its own (as encrypted-channel.ts does).
        bundle = bytes(frame) if isinstance(frame, bytes) else b""
    if len(bundle) < OVERHEAD:
        raise E2eeError("Ciphertext bundle too short")
    nonce = bundle[:NONCE_BYTES]
    try:
        plaintext = bytes(box.decrypt(bundle[NONCE_BYTES:], nonce))
    except CryptoError:
        raise E2eeError(DECRYPTION_FAILED) from None
    try:
        return nonce, plaintext.decode("utf-8")
    except UnicodeDecodeError:
        return nonce, plaintext


def _is_json_looking(frame: Message) -> bool:
    if isinstance(frame, str):
        return frame.lstrip().startswith("{")
    return frame.lstrip().startswith(b"{")


# ------------------------------------------------------------------ channels


@dataclass(frozen=True)
class Received:
    """What one incoming frame produced: frames to send now (a ready, or the sends a client
    queued while handshaking, sealed) and at most one application message."""

    outgoing: tuple[str, ...] = ()
    message: Message | None = None
    opened: bool = False
    """This frame completed the handshake."""


class _Open:
    """Post-handshake rules common to both ends (``EncryptedChannel.handleMessage``)."""

    def __init__(self, box: Box | None) -> None:
        self._box = box
        # A box carries no counter, so a relay could replay one; every sender draws a random
        # nonce, so a nonce seen again under the same key is a replay (checked over a window).
        self._seen: set[bytes] = set()
        self._order: deque[bytes] = deque()

    def _rekeyed(self) -> None:
        self._seen.clear()
        self._order.clear()

    def _open_message(self, frame: Message) -> Message | None:
        """The message ``frame`` carries, ``None`` for a stray handshake frame (ignored)."""
        assert self._box is not None
        if _is_json_looking(frame):
            parsed = _json_object(frame)
            if parsed is not None:
                kind = parsed.get("type")
                if kind == "e2ee_ready" or (
                    kind == "e2ee_hello" and isinstance(parsed.get("key"), str)
                ):
                    return None
                raise E2eeError(PLAINTEXT_ON_ENCRYPTED)
        nonce, message = _open_with_nonce(self._box, frame)
        if nonce in self._seen:
            raise E2eeError(REPLAYED)
        self._seen.add(nonce)
        self._order.append(nonce)
        if len(self._order) > REPLAY_WINDOW:
            self._seen.discard(self._order.popleft())
        return message

    def seal(self, message: Message) -> str:
        """``message`` as a frame; only once the channel is open."""
        if self._box is None:
            raise E2eeError("Channel not open")
        return seal(self._box, message)


class ClientChannel(_Open):
    """The initiator (our CLI, the app): send :attr:`hello` as the socket opens and again
    every :data:`HANDSHAKE_RETRY_SECONDS` while :meth:`retry_hello` returns it; feed every
    received frame to :meth:`receive`; :meth:`send` queues until the daemon is ready."""

    def __init__(self, daemon_public_key_b64: str, *, key: PrivateKey | None = None) -> None:
        self._key = key if key is not None else PrivateKey.generate()
        # The pairing offer is the credential: an unusable key is refused before any socket.
        self._daemon_key = import_public_key(daemon_public_key_b64)
        self._shared = Box(self._key, self._daemon_key)
        super().__init__(None)
        self.hello = hello_frame(self._key.public_key)
        self._pending: deque[Message] = deque(maxlen=MAX_PENDING_SENDS)

    @property
    def is_open(self) -> bool:
        return self._box is not None

    @property
    def public_key(self) -> PublicKey:
        return self._key.public_key

    def retry_hello(self) -> str | None:
        """The hello to resend while no ready came, else ``None``."""
        return None if self.is_open else self.hello

    def send(self, message: Message) -> str | None:
        """The frame for ``message``, or ``None`` when it was queued for the handshake."""
        if not self.is_open:
            self._pending.append(message)  # a full deque drops the oldest, as TypeScript
            return None
        return self.seal(message)

    def receive(self, frame: Message) -> Received:
        if not self.is_open:
            # Nothing but a ready counts before the handshake; other traffic is ignored.
            if not is_ready(frame):
                return Received()
            self._box = self._shared
            pending = tuple(self.seal(message) for message in self._pending)
            self._pending.clear()
            return Received(outgoing=pending, opened=True)
        return Received(message=self._open_message(frame))


class ResponderChannel(_Open):
    """The responder (the daemon), with its long-term key: the first frame must be a valid
    hello (else :class:`HandshakeError`, close with :data:`HANDSHAKE_FAILED`), answered with
    :data:`READY_FRAME`. Once open, a repeated hello with the same key gets ready again without
    re-keying; a new key re-keys the channel (a new client behind the same data socket)."""

    def __init__(self, daemon_key: PrivateKey) -> None:
        super().__init__(None)
        self._daemon_key = daemon_key
        self._shared_key: bytes | None = None

    @property
    def is_open(self) -> bool:
        return self._box is not None

    def _accept(self, client_key: PublicKey) -> Received:
        box = Box(self._daemon_key, client_key)
        shared = bytes(box.shared_key())
        opened = self._box is None
        if shared != self._shared_key:
            self._box, self._shared_key = box, shared
            self._rekeyed()
        return Received(outgoing=(READY_FRAME,), opened=opened)

    def receive(self, frame: Message) -> Received:
        if not self.is_open:
            return self._accept(parse_hello(frame))
        if _is_json_looking(frame):
            parsed = _json_object(frame)
            if parsed is not None and parsed.get("type") == "e2ee_hello":
                key = parsed.get("key")
                if isinstance(key, str):
                    return self._accept(import_public_key(key))
        return Received(message=self._open_message(frame))

    def send(self, message: Message) -> str:
        return self.seal(message)
