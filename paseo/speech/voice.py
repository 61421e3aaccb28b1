"""Voice mode: a spoken conversation with an existing agent.

A voice session is attached to one agent. Microphone audio comes in as numbered chunks (the
dictation rules: acknowledged once stored, a repeat is harmless, a gap is refused), turn
detection (:mod:`paseo.speech.turns`) cuts it into utterances, each utterance is transcribed
with ``features.voiceMode.stt`` and sent to the agent as a prompt, followed by the session's
instructions. The agent answers through the MCP server's ``speak`` tool, offered (and its
permission requests approved) only while a voice session is attached to that agent; each
``speak`` is synthesized with ``features.voiceMode.tts`` and streamed back to the client as
``voice.output`` notifications. ``abort`` drops the utterance being heard or transcribed,
cancels speech being synthesized or streamed and interrupts the agent's turn.

Attaching restarts the agent's program when one runs (it is resumed by the next prompt), so
the program lists its MCP tools again and sees ``speak``; detaching leaves it running, and a
``speak`` it still tries is refused.

A session belongs to the daemon, not to a connection: notifications go to the connection that
made its latest call, and a session nobody calls for :data:`IDLE_TTL` seconds is detached.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from paseo_hookspecs.agents import AgentObserver
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, PaseoError, Unavailable
from paseo_hookspecs.events import PermissionRequest

from paseo.speech.audio import parse_mime, pcm_to_wav
from paseo.speech.dictation import Notify
from paseo.speech.turns import RATE, ToMono16k, TurnDetector

log = logging.getLogger("paseo.speech.voice")

STREAM = "voice"
"""The per-connection stream the voice notifications are numbered on."""

IDLE_TTL = 300.0
MAX_SESSIONS = 8
MAX_PENDING_UTTERANCES = 4
"""Utterances heard but not yet transcribed before a chunk's ack waits (back-pressure)."""
MAX_QUEUED_UTTERANCES = 8
"""Utterances kept waiting at most: beyond, the oldest is dropped and the client told. Each is
at most :data:`~paseo.speech.turns.MAX_UTTERANCE_MS` long, so a session's audio is bounded."""
BACKLOG_WAIT = 20.0
"""Seconds an ack waits at most for transcription to catch up."""
OUTPUT_CHUNK_SECONDS = 0.5
"""Synthesized speech is streamed in pieces this long, so playback can start early."""

INSTRUCTIONS = (
    "(Voice mode: the user said the above aloud and listens for your answer. Answer by "
    "calling the `speak` tool of the paseo MCP server with what to say, in short plain "
    "sentences; only what you pass to `speak` is heard.)"
)
"""What follows each transcribed utterance in the agent's prompt, unless the client sets its
own ``instructions`` in ``voice.start``."""

Transcribe = Callable[[bytes], Awaitable[str]]
"""A WAV in, its transcript out (``features.voiceMode.stt``)."""
Synthesize = Callable[[str], Awaitable[tuple[bytes, str]]]
"""Text in, ``(audio, mime type)`` out (``features.voiceMode.tts``)."""


class VoiceAgents(Protocol):
    """The agent manager as voice mode needs it (bound by the composition root)."""

    async def resolve(self, reference: str) -> str:
        """The id of the agent ``reference`` names; :class:`NotFound` otherwise."""

    async def refresh_tools(self, agent_id: str) -> None:
        """Make the agent's program list its MCP tools again (restart it when it runs)."""

    async def prompt(self, agent_id: str, text: str) -> None:
        """Send ``text`` as the agent's next prompt (a running turn is replaced)."""

    async def interrupt(self, agent_id: str) -> bool:
        """Cancel the agent's turn; whether one was running."""

    async def approve(self, agent_id: str, request_id: str) -> None:
        """Allow the agent's pending permission request ``request_id``."""


def is_speak_tool(name: str | None) -> bool:
    """``name`` is the paseo server's ``speak`` tool: bare, or namespaced by the server name
    (Claude Code's ``mcp__paseo__speak``, others' ``paseo.speak``)."""
    if name == "speak":
        return True
    for separator in ("__", ".", "/"):
        suffix = f"{separator}speak"
        if name and name.endswith(suffix):
            return name[: -len(suffix)].split(separator)[-1] == "paseo"
    return False


class VoiceSession:
    """One agent's voice conversation (see the module docstring)."""

    def __init__(
        self,
        voice_id: str,
        agent_id: str,
        *,
        mime_type: str,
        instructions: str,
        silence_ms: int,
        agents: VoiceAgents,
        transcribe: Transcribe,
        synthesize: Synthesize,
        now: float,
    ) -> None:
        base, params = parse_mime(mime_type)
        if base not in ("audio/pcm", "audio/l16", "audio/raw"):
            raise InvalidParams(
                f"voice mode takes raw PCM (audio/pcm;rate=16000;channels=1), not {mime_type!r}"
            )
        try:
            rate, channels = int(params.get("rate", RATE)), int(params.get("channels", 1))
            self._convert = ToMono16k(rate, channels)
        except ValueError:
            raise InvalidParams(f"bad PCM parameters in {mime_type!r}") from None
        self.id = voice_id
        self.agent_id = agent_id
        self.mime_type = mime_type
        self.instructions = instructions
        self._detector = TurnDetector(silence_ms=silence_ms)
        self._agents = agents
        self._transcribe = transcribe
        self._synthesize = synthesize
        self.acked_seq = 0
        self.touched = now
        self.notify: Notify | None = None
        self.utterances = 0
        self._queue: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue()
        self._transcribed = asyncio.Event()
        """Set each time the worker takes the next utterance (and when the queue is emptied)."""
        self._notices: set[asyncio.Task[None]] = set()
        self._worker: asyncio.Task[None] | None = None
        self._speaking: set[asyncio.Task[tuple[str, int, str]]] = set()
        self._speeches = 0
        self.closed = False

    # --- listening ---------------------------------------------------------------------------

    def add(self, seq: int, data: bytes, *, end_of_turn: bool = False) -> bool:
        """Store chunk ``seq``; ``False`` when it was stored already (a repeat). With
        ``end_of_turn`` the utterance in progress ends with this chunk."""
        if seq <= self.acked_seq:
            return False
        if seq != self.acked_seq + 1:
            raise Conflict(
                f"chunk {seq} arrived before chunk {self.acked_seq + 1}; resend from there",
                data={"ackedSeq": self.acked_seq},
            )
        self.acked_seq = seq
        for utterance in self._detector.feed(self._convert.convert(data)):
            self._hear(utterance)
        if end_of_turn:
            last = self._detector.flush()
            if last is not None:
                self._hear(last)
        return True

    @property
    def speaking(self) -> bool:
        """The user is speaking (an utterance is in progress)."""
        return self._detector.speaking

    def _hear(self, utterance: bytes) -> None:
        self.utterances += 1
        if self._queue.qsize() >= MAX_QUEUED_UTTERANCES:
            dropped, _ = self._queue.get_nowait()
            message = (
                f"utterance {dropped} was dropped: transcription is {MAX_QUEUED_UTTERANCES} "
                "utterances behind"
            )
            notice = asyncio.create_task(self._error("unavailable", message))
            self._notices.add(notice)
            notice.add_done_callback(self._notices.discard)
        self._queue.put_nowait((self.utterances, utterance))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name=f"voice-{self.id}")

    async def caught_up(self) -> None:
        """Return once at most :data:`MAX_PENDING_UTTERANCES` wait for transcription, or
        after :data:`BACKLOG_WAIT` seconds: a chunk's ack waits for this, pacing the sender."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(BACKLOG_WAIT):
                while not self.closed and self._queue.qsize() > MAX_PENDING_UTTERANCES:
                    self._transcribed.clear()
                    await self._transcribed.wait()

    async def _work(self) -> None:
        """Transcribe and prompt, one utterance at a time, in the order they were spoken."""
        while not self._queue.empty():
            number, utterance = self._queue.get_nowait()
            self._transcribed.set()
            try:
                text = (await self._transcribe(pcm_to_wav(utterance, rate=RATE))).strip()
                if text:
                    await self._agents.prompt(self.agent_id, f"{text}\n\n{self.instructions}")
                # After the prompt: a client that hears of it can wait for the agent's turn.
                await self._send(
                    "voice.transcript",
                    {"voiceId": self.id, "utterance": number, "text": text, "prompted": bool(text)},
                )
            except PaseoError as exc:
                await self._error(exc.code, exc.message)
            except Exception as exc:
                # An engine is a plugin: its bug is reported to the client, the session goes on.
                log.exception("voice %s: utterance %d failed", self.id, number)
                await self._error("unavailable", f"utterance {number} failed: {exc}")

    # --- speaking ----------------------------------------------------------------------------

    async def speak(self, text: str) -> tuple[str, int, str]:
        """Synthesize ``text`` and stream it; ``(speechId, chunks, mime type)`` once sent.
        :class:`Conflict` when an abort (or a stop) cancelled it."""
        if self.closed:
            raise Conflict(f"voice mode on agent {self.agent_id} has ended")
        self._speeches += 1
        speech_id = f"{self.id}.{self._speeches}"
        task = asyncio.create_task(self._speak(speech_id, text))
        self._speaking.add(task)
        task.add_done_callback(self._speaking.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                raise Conflict("the user interrupted: the speech was cancelled") from None
            raise

    async def _speak(self, speech_id: str, text: str) -> tuple[str, int, str]:
        audio, mime = await self._synthesize(text)
        pieces, piece_mime = _pieces(audio, mime)
        for index, piece in enumerate(pieces, 1):
            payload: dict[str, Any] = {
                "voiceId": self.id,
                "speechId": speech_id,
                "seq": index,
                "final": index == len(pieces),
                "mimeType": piece_mime,
                "audio": base64.b64encode(piece).decode("ascii"),
            }
            if index == 1:
                payload["text"] = text
            await self._send("voice.output", payload)
        return speech_id, len(pieces), piece_mime

    # --- abort, close ------------------------------------------------------------------------

    async def abort(self) -> tuple[int, bool]:
        """Stop hearing, transcribing and speaking, and interrupt the agent's turn;
        ``(speeches cancelled, turn interrupted)``."""
        self._detector.reset()
        while not self._queue.empty():
            self._queue.get_nowait()
        self._transcribed.set()
        cancelled = await self._cancel_tasks()
        interrupted = await self._agents.interrupt(self.agent_id)
        return cancelled, interrupted

    async def _cancel_tasks(self) -> int:
        tasks: list[asyncio.Task[Any]] = [task for task in self._speaking if not task.done()]
        speeches = len(tasks)
        if self._worker is not None and not self._worker.done():
            tasks.append(self._worker)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        return speeches

    async def close(self) -> None:
        self.closed = True
        self._transcribed.set()
        await self._cancel_tasks()

    async def _error(self, code: str, message: str) -> None:
        await self._send("voice.error", {"voiceId": self.id, "code": code, "message": message})

    async def _send(self, method: str, payload: dict[str, Any]) -> None:
        notify = self.notify
        if notify is None:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            await notify(method, {**payload, "stream": STREAM})


def _pieces(audio: bytes, mime: str) -> tuple[list[bytes], str]:
    """Synthesized ``audio`` cut into :data:`OUTPUT_CHUNK_SECONDS` pieces of raw PCM (from a
    WAV), or whole when it is another container."""
    import io
    import wave

    from paseo.speech.audio import WAV, repair_wav

    if parse_mime(mime)[0] not in (WAV, "audio/x-wav", "audio/wave"):
        return [audio], mime
    try:
        with wave.open(io.BytesIO(repair_wav(audio))) as reader:
            rate, channels, width = (
                reader.getframerate(),
                reader.getnchannels(),
                reader.getsampwidth(),
            )
            pcm = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError, InvalidParams):
        return [audio], mime
    if width != 2:
        return [audio], mime
    size = max(2 * channels, int(rate * OUTPUT_CHUNK_SECONDS) * 2 * channels)
    pieces = [pcm[i : i + size] for i in range(0, len(pcm), size)] or [b""]
    return pieces, f"audio/pcm;rate={rate};channels={channels}"


class VoiceSessions(AgentObserver):
    """The daemon's voice sessions: at most one per agent, forgotten :data:`IDLE_TTL` seconds
    after their last call. Also the agent observer (subscribed to the agent port's events)
    that approves ``speak`` permission requests of attached agents."""

    def __init__(
        self,
        agents: VoiceAgents,
        transcribe: Transcribe,
        synthesize: Synthesize,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._agents = agents
        self._transcribe = transcribe
        self._synthesize = synthesize
        self._clock = clock
        self._sessions: dict[str, VoiceSession] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(
        self, agent_ref: str, *, mime_type: str, instructions: str | None, silence_ms: int
    ) -> VoiceSession:
        await self.sweep()
        agent_id = await self._agents.resolve(agent_ref)
        current = self.for_agent(agent_id)
        if current is not None:
            raise Conflict(
                f"voice mode is already attached to agent {agent_id} ({current.id}); "
                "resume it with voice.start {voiceId} or stop it first",
                data={"voiceId": current.id},
            )
        if len(self._sessions) >= MAX_SESSIONS:
            raise Unavailable(f"too many voice sessions (at most {MAX_SESSIONS})")
        session = VoiceSession(
            f"voc_{secrets.token_hex(8)}",
            agent_id,
            mime_type=mime_type,
            instructions=instructions or INSTRUCTIONS,
            silence_ms=silence_ms,
            agents=self._agents,
            transcribe=self._transcribe,
            synthesize=self._synthesize,
            now=self._clock(),
        )
        self._sessions[session.id] = session
        try:
            await self._agents.refresh_tools(agent_id)
        except BaseException:
            del self._sessions[session.id]
            raise
        return session

    async def get(self, voice_id: str) -> VoiceSession:
        await self.sweep()
        session = self._sessions.get(voice_id)
        if session is None:
            raise NotFound(
                f"no voice session {voice_id!r} (stopped, or idle for over {IDLE_TTL:.0f} s)",
                data={"voiceId": voice_id},
            )
        session.touched = self._clock()
        return session

    def for_agent(self, agent_id: str) -> VoiceSession | None:
        for session in self._sessions.values():
            if session.agent_id == agent_id:
                return session
        return None

    def attached(self, agent_id: str) -> bool:
        """Voice mode is attached to ``agent_id`` (the MCP server offers it ``speak``)."""
        return self.for_agent(agent_id) is not None

    async def speak(self, agent_ref: str, text: str) -> tuple[VoiceSession, tuple[str, int, str]]:
        await self.sweep()
        agent_id = await self._agents.resolve(agent_ref)
        session = self.for_agent(agent_id)
        if session is None:
            raise Conflict(
                f"voice mode is not attached to agent {agent_id}: there is nobody to speak to"
            )
        session.touched = self._clock()
        return session, await session.speak(text)

    async def stop(self, voice_id: str) -> bool:
        session = self._sessions.pop(voice_id, None)
        if session is None:
            return False
        await session.close()
        return True

    async def sweep(self) -> None:
        deadline = self._clock() - IDLE_TTL
        for voice_id in [s.id for s in self._sessions.values() if s.touched < deadline]:
            await self.stop(voice_id)

    async def close(self) -> None:
        for voice_id in list(self._sessions):
            await self.stop(voice_id)
        for task in list(self._tasks):
            task.cancel()

    # --- agent observer (paseo_hookspecs.agents.AgentObserver) ------------------------------

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        if self.attached(agent_id) and is_speak_tool(request.toolName):
            await self._approve(agent_id, request.id)

    async def _approve(self, agent_id: str, request_id: str) -> None:
        try:
            await self._agents.approve(agent_id, request_id)
        except PaseoError as exc:
            # Answered meanwhile (a client, or the turn ended): nothing left to approve.
            log.info(
                "voice: speak request %s of %s not approved: %s", request_id, agent_id, exc.message
            )
