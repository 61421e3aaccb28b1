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

The work is bounded, so that dictation cannot hold the daemon (18 chunks of 1.5 MB once took
591 s, and other clients waited as long): audio is assembled in a worker thread; at most
:data:`MAX_TRANSCRIPTIONS` passes run at once over every dictation and one-shot transcription
(:class:`Dictations` holds the semaphore); a partial pass of raw PCM covers at most
:data:`PARTIAL_WINDOW_SECONDS` of new audio, earlier windows keeping the text they were given
(so the passes cost the audio once, not once per chunk), and other formats get partials only
while short; a chunk is acknowledged only when the partials are at most
:data:`MAX_BACKLOG_WINDOWS` windows behind (or after :data:`BACKLOG_WAIT` seconds): the sender,
which waits for each ack, is slowed to what the engine keeps up with. The audio of all
dictations together is bounded by :data:`MAX_TOTAL_AUDIO_BYTES`.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, PaseoError, Unavailable

from paseo.speech.audio import normalize, parse_mime

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
MAX_TOTAL_AUDIO_BYTES = 192 * 1024 * 1024
"""The audio of every open dictation together."""
MAX_TRANSCRIPTIONS = 2
"""Transcription passes running at once (dictations and one-shots): the rest queue."""
PARTIAL_WINDOW_SECONDS = 30.0
"""New raw PCM audio a partial pass transcribes at most."""
PARTIAL_WHOLE_BYTES = 2 * 1024 * 1024
"""Other formats cannot be cut: partial passes of the whole audio stop beyond this size."""
MAX_BACKLOG_WINDOWS = 2
"""Windows of audio the partials may be behind before acknowledgements wait."""
BACKLOG_WAIT = 20.0
"""Seconds an acknowledgement waits at most for the partials to catch up (a client's request
timeout is longer)."""

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
        transcriptions: asyncio.Semaphore | None = None,
    ) -> None:
        self.id = dictation_id
        self.mime_type = mime_type
        self.language = language
        self.engine_name = engine_name
        self._engine = engine
        self._partials = partials
        self._chunks: list[bytes] = []
        self._starts: list[int] = []
        """Where each chunk starts in the audio."""
        self._size = 0
        self._transcriptions = transcriptions or asyncio.Semaphore(MAX_TRANSCRIPTIONS)
        self._window = _window_bytes(mime_type)
        """Bytes of a partial window (raw PCM), or ``None`` (audio that cannot be cut)."""
        self._committed: list[str] = []
        """The text of each earlier window, in order."""
        self._committed_bytes = 0
        self._covered = 0
        """Bytes of audio the last finished partial pass covered."""
        self._caught_up = asyncio.Event()
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

    @property
    def size(self) -> int:
        return self._size

    def _slice(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` of the audio received (blocking: called in a thread)."""
        first = max(0, bisect.bisect_right(self._starts, start) - 1)
        last = bisect.bisect_left(self._starts, end)
        joined = b"".join(self._chunks[first:last])
        offset = self._starts[first] if self._starts else 0
        return joined[start - offset : end - offset]

    async def audio(self, start: int = 0, end: int | None = None) -> tuple[bytes, str]:
        """Bytes ``start`` to ``end`` (default: everything received so far), as a complete
        file for the engine, assembled in a worker thread (megabytes are joined and copied)."""
        stop = self._size if end is None else end

        def assemble() -> tuple[bytes, str]:
            return normalize(self._slice(start, stop), self.mime_type)

        return await asyncio.to_thread(assemble)

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
        self._starts.append(self._size)
        self._size += len(data)
        if self._partials_wanted() and (self._partial_task is None or self._partial_task.done()):
            self._partial_task = asyncio.create_task(self._run_partials())
        return True

    def _partials_wanted(self) -> bool:
        return self._partials and (self._window is not None or self._size <= PARTIAL_WHOLE_BYTES)

    def _backlog(self) -> int:
        return self._size - self._covered

    async def caught_up(self) -> None:
        """Return once the partials are at most :data:`MAX_BACKLOG_WINDOWS` behind (at once
        without partials), or after :data:`BACKLOG_WAIT` seconds: the acknowledgement of a
        chunk waits for this, which paces the sender."""
        if self._window is None:
            return
        bound = MAX_BACKLOG_WINDOWS * self._window
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(BACKLOG_WAIT):
                while self.state == "open" and self._partials_wanted() and self._backlog() > bound:
                    task = self._partial_task
                    if task is None or task.done():
                        return
                    self._caught_up.clear()
                    await self._caught_up.wait()

    async def _run_partials(self) -> None:
        try:
            while (
                self.state == "open"
                and self._partial_seq < self.acked_seq
                and self._partials_wanted()
            ):
                seq, size = self.acked_seq, self._size
                try:
                    text = await self._partial_text(size)
                except PaseoError as exc:
                    # Too little audio for a header, or an engine hiccup: the final decides.
                    log.debug("dictation %s: no partial at chunk %d: %s", self.id, seq, exc.message)
                    text = ""
                self._partial_seq, self._covered = seq, size
                self._caught_up.set()
                if text and self.state == "open":
                    payload = {"dictationId": self.id, "text": text, "ackedSeq": seq}
                    await self._send("dictation.partial", payload)
        finally:
            self._caught_up.set()

    async def _partial_text(self, size: int) -> str:
        """The text of the first ``size`` bytes: whole windows keep the text they were given
        (each is transcribed once), the rest is transcribed now."""
        window = self._window
        if window is None:
            return await self._transcribe(0, size)
        while size - self._committed_bytes > window:
            start = self._committed_bytes
            self._committed.append(await self._transcribe(start, start + window))
            self._committed_bytes = start + window
        tail = await self._transcribe(self._committed_bytes, size)
        return " ".join(text for text in (*self._committed, tail) if text)

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

    async def _transcribe(self, start: int = 0, end: int | None = None) -> str:
        async with self._transcriptions:
            audio, mime_type = await self.audio(start, end)
            return await self._transcribe_audio(audio, mime_type)

    async def _transcribe_audio(self, audio: bytes, mime_type: str) -> str:
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
        self.transcriptions = asyncio.Semaphore(MAX_TRANSCRIPTIONS)
        """Held by every transcription pass (dictations and the service's one-shots)."""

    def check_room(self, size: int) -> None:
        """Refuse ``size`` more bytes of audio when the open dictations hold the most allowed."""
        held = sum(d.size for d in self._open.values() if d.state == "open")
        if held + size > MAX_TOTAL_AUDIO_BYTES:
            raise Unavailable(
                f"the daemon holds {held // 2**20} MiB of dictation audio, the most it keeps "
                f"({MAX_TOTAL_AUDIO_BYTES // 2**20} MiB): finish or cancel a dictation first"
            )

    async def create(self, **options: Any) -> Dictation:
        await self.sweep()
        if len(self._open) >= MAX_DICTATIONS:
            raise Unavailable(f"too many dictations in progress (at most {MAX_DICTATIONS})")
        dictation = Dictation(
            f"dct_{secrets.token_hex(8)}",
            now=self._clock(),
            transcriptions=self.transcriptions,
            **options,
        )
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


def _window_bytes(mime_type: str) -> int | None:
    """Bytes of :data:`PARTIAL_WINDOW_SECONDS` of raw PCM (whole frames), else ``None``."""
    base, params = parse_mime(mime_type)
    if base not in ("audio/pcm", "audio/l16", "audio/raw"):
        return None
    try:
        frame = 2 * int(params.get("channels", 1))
        frames = int(PARTIAL_WINDOW_SECONDS * int(params.get("rate", 16000)))
    except ValueError:
        return None
    return max(frame, frames * frame)
