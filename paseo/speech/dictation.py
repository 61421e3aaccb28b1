"""Resumable dictation: numbered chunks in, partial results while audio arrives, one final.

A dictation belongs to the daemon, not to a connection: a client that drops keeps its
dictation for :data:`IDLE_TTL` seconds and resumes it from any connection (``dictation.start``
with its id, or simply its next chunk). Chunks are numbered 1, 2, 3 …; a chunk is acknowledged
once stored, a chunk at or below the acknowledged number is a harmless repeat (a client that
never saw the ack sends it again), and a gap is refused — so nothing is lost or counted twice.

Partial results come from transcribing the audio received so far, one pass at a time (a pass
that finds more audio waiting starts another). Notifications go to the connection that spoke
last; one lost with a dropped connection is not repeated — the final result is also the
answer of ``dictation.finish``, which may be called again after a reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, PaseoError, Unavailable

from paseo.speech.audio import normalize

if TYPE_CHECKING:
    from paseo_hookspecs.interfaces.speech import SpeechToText

log = logging.getLogger("paseo.speech")

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Sends one notification to a client connection."""

STREAM = "dictation"
"""The per-connection stream the dictation notifications are numbered on."""

IDLE_TTL = 120.0
"""Seconds a dictation outlives its last call (open or finished) before it is forgotten."""

MAX_DICTATIONS = 16
MAX_AUDIO_BYTES = 64 * 1024 * 1024
"""One dictation's audio (an hour of 16 kHz mono PCM is 115 MB: long enough for speech)."""

State = Literal["open", "finishing", "finished"]


class Dictation:
    """One dictation's audio, acknowledgements and results."""

    def __init__(
        self,
        dictation_id: str,
        *,
        mime_type: str,
        language: str | None,
        engine_name: str,
        engine: SpeechToText,
        partials: bool,
        now: float,
    ) -> None:
        self.id = dictation_id
        self.mime_type = mime_type
        self.language = language
        self.engine_name = engine_name
        self._engine = engine
        self._partials = partials
        self._chunks: list[bytes] = []
        self._size = 0
        self.state: State = "open"
        self.touched = now
        self.notify: Notify | None = None
        self._partial_task: asyncio.Task[None] | None = None
        self._partial_seq = 0
        self._final: asyncio.Future[str] | None = None
        self.text: str | None = None

    @property
    def acked_seq(self) -> int:
        return len(self._chunks)

    def audio(self) -> tuple[bytes, str]:
        """Everything received so far, as a complete file for the engine."""
        return normalize(b"".join(self._chunks), self.mime_type)

    def add(self, seq: int, data: bytes) -> bool:
        """Store chunk ``seq``; ``False`` when it was stored already (a repeat)."""
        if self.state != "open":
            raise Conflict(
                f"dictation {self.id} is {self.state}; it takes no more audio",
                data={"ackedSeq": self.acked_seq},
            )
        if seq <= self.acked_seq:
            return False
        if seq != self.acked_seq + 1:
            raise Conflict(
                f"chunk {seq} arrived before chunk {self.acked_seq + 1}; resend from there",
                data={"ackedSeq": self.acked_seq},
            )
        if self._size + len(data) > MAX_AUDIO_BYTES:
            raise InvalidParams(f"dictation {self.id} exceeds {MAX_AUDIO_BYTES} bytes of audio")
        self._chunks.append(data)
        self._size += len(data)
        if self._partials and (self._partial_task is None or self._partial_task.done()):
            self._partial_task = asyncio.create_task(self._run_partials())
        return True

    async def _run_partials(self) -> None:
        while self.state == "open" and self._partial_seq < self.acked_seq:
            seq = self.acked_seq
            try:
                text = await self._transcribe()
            except PaseoError as exc:
                # Too little audio for a header, or an engine hiccup: the final pass decides.
                log.debug("dictation %s: no partial at chunk %d: %s", self.id, seq, exc.message)
                text = ""
            self._partial_seq = seq
            if text and self.state == "open":
                payload = {"dictationId": self.id, "text": text, "ackedSeq": seq}
                await self._send("dictation.partial", payload)

    async def finish(self, last_seq: int | None) -> str:
        """The final transcript (computed once; later calls get the same answer)."""
        if last_seq is not None and last_seq != self.acked_seq:
            raise Conflict(
                f"the daemon holds chunks 1..{self.acked_seq}, not 1..{last_seq}; "
                f"resend from {self.acked_seq + 1}",
                data={"ackedSeq": self.acked_seq},
            )
        if self._final is None:
            self.state = "finishing"
            if self._partial_task is not None:
                self._partial_task.cancel()
            self._final = asyncio.ensure_future(self._transcribe_final())
        # Shielded: a caller that disconnects must not cancel the transcription it started.
        return await asyncio.shield(self._final)

    async def _transcribe_final(self) -> str:
        try:
            text = await self._transcribe()
        except PaseoError as exc:
            # finish may be retried (after fixing the engine's configuration, say).
            self.state, self._final = "open", None
            await self._send(
                "dictation.error",
                {"dictationId": self.id, "code": exc.code, "message": exc.message},
            )
            raise
        self.text, self.state = text, "finished"
        await self._send(
            "dictation.final", {"dictationId": self.id, "text": text, "ackedSeq": self.acked_seq}
        )
        return text

    async def _transcribe(self) -> str:
        audio, mime_type = self.audio()
        try:
            return await self._engine.transcribe(audio, mime_type=mime_type, language=self.language)
        except PaseoError:
            raise
        except Exception as exc:
            # An engine is a plugin: its bug becomes an error the client can read and retry.
            log.exception("speech engine %s failed", self.engine_name)
            raise Unavailable(f"the {self.engine_name} engine failed: {exc}") from exc

    async def _send(self, method: str, payload: dict[str, Any]) -> None:
        notify = self.notify
        if notify is None:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            await notify(method, {**payload, "stream": STREAM})

    async def close(self) -> None:
        """Stop background work (cancel or expiry)."""
        self.state = "finished"
        tasks = [t for t in (self._partial_task, self._final) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, PaseoError):
                await task


class Dictations:
    """The daemon's dictations by id, forgotten :data:`IDLE_TTL` seconds after their last
    call. Expiry is checked on every call, so no timer runs while nobody dictates."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._open: dict[str, Dictation] = {}

    async def create(self, **options: Any) -> Dictation:
        await self.sweep()
        if len(self._open) >= MAX_DICTATIONS:
            raise Unavailable(f"too many dictations in progress (at most {MAX_DICTATIONS})")
        dictation = Dictation(f"dct_{secrets.token_hex(8)}", now=self._clock(), **options)
        self._open[dictation.id] = dictation
        return dictation

    async def get(self, dictation_id: str) -> Dictation:
        """The dictation, its idle timer restarted; :class:`NotFound` once forgotten."""
        await self.sweep()
        dictation = self._open.get(dictation_id)
        if dictation is None:
            raise NotFound(
                f"no dictation {dictation_id!r} (cancelled, or idle for over {IDLE_TTL:.0f} s)",
                data={"dictationId": dictation_id},
            )
        dictation.touched = self._clock()
        return dictation

    async def remove(self, dictation_id: str) -> bool:
        dictation = self._open.pop(dictation_id, None)
        if dictation is None:
            return False
        await dictation.close()
        return True

    async def sweep(self) -> None:
        deadline = self._clock() - IDLE_TTL
        for dictation_id in [d.id for d in self._open.values() if d.touched < deadline]:
            await self.remove(dictation_id)

    async def close(self) -> None:
        for dictation_id in list(self._open):
            await self.remove(dictation_id)
