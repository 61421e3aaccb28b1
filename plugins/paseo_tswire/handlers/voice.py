"""Voice mode and dictation on the daemon's speech services (``dictation.*``, ``voice.*``,
``speech.transcribe``: the session's own methods, with its access).

- ``server_info.capabilities.voice`` says whether dictation and voice mode can run here
  (``features.*.enabled`` and the site's engine installed), with the TypeScript daemon's
  reason when not: the app shows its voice controls from it.
- ``dictation_stream_*``: the client names its dictations and numbers chunks from 0; the
  daemon names them and numbers from 1. Each session maps its ids (at most
  :data:`MAX_DICTATIONS` open) and shifts the numbers; acks, partials, the final text and
  errors come back as ``dictation_stream_ack`` / ``_partial`` / ``_final`` / ``_error``.
- ``set_voice_mode`` attaches a voice session to the agent (``voice.start`` / ``voice.stop``);
  ``voice_audio_chunk`` feeds it (``voice.audio``, ``isLast`` ends the utterance), its
  transcripts come back as ``transcription_result`` and its speech as ``audio_output``;
  ``abort_request`` is ``voice.abort``. Outside voice mode the chunks of one recording are
  transcribed once its last arrives (``speech.transcribe``).
- ``audio_played`` needs nothing: this daemon streams speech without waiting for playback.

Audio held by the transport is bounded per session (:data:`MAX_SESSION_AUDIO_BYTES`, counted
over its open dictations and the recording being buffered); beyond it the dictation or the
recording is dropped with an error, and the daemon's own bounds apply behind that.
"""

from __future__ import annotations

import base64
import binascii
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import voice as vm

log = logging.getLogger("paseo.tswire")

MAX_DICTATIONS = 4
"""Open dictations per session (the daemon allows 16 over every client)."""
MAX_SESSION_AUDIO_BYTES = 64 * 1024 * 1024
"""Audio bytes one session may have in open dictations and a buffered recording."""
FINISH_TIMEOUT_MS = 120_000
"""What ``dictation_stream_finish_accepted`` tells the client to wait for the final text."""
VOICE_FORMAT = "audio/pcm;rate=16000;channels=1"
EXTRA_KEY = "voice"


@dataclass
class _Dictation:
    ours: str
    size: int = 0


@dataclass
class VoiceRoom:
    """One session's dictations, voice session and buffered recording."""

    session: ClientSession
    dictations: dict[str, _Dictation] = field(default_factory=dict)
    by_ours: dict[str, str] = field(default_factory=dict)
    voice_id: str | None = None
    agent_id: str | None = None
    voice_format: str = VOICE_FORMAT
    voice_seq: int = 0
    recording: list[bytes] = field(default_factory=list)
    recording_size: int = 0

    def held(self) -> int:
        return self.recording_size + sum(d.size for d in self.dictations.values())

    def forget(self, theirs: str) -> None:
        entry = self.dictations.pop(theirs, None)
        if entry is not None:
            self.by_ours.pop(entry.ours, None)

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "dictation.partial":
            theirs = self.by_ours.get(str(params.get("dictationId")))
            if theirs is not None:
                await self.session.push(
                    "dictation_stream_partial",
                    vm.DictationText(dictationId=theirs, text=str(params.get("text") or "")),
                )
        elif method == "dictation.error":
            theirs = self.by_ours.get(str(params.get("dictationId")))
            if theirs is not None:
                await self.session.push(
                    "dictation_stream_error",
                    vm.DictationError(
                        dictationId=theirs,
                        error=str(params.get("message") or "dictation failed"),
                        retryable=True,
                        reasonCode=str(params.get("code") or "") or None,
                    ),
                )
        elif method == "voice.transcript" and params.get("voiceId") == self.voice_id:
            await self.session.push(
                "transcription_result",
                vm.TranscriptionResult(
                    text=str(params.get("text") or ""),
                    requestId=f"{params.get('voiceId')}:{params.get('utterance')}",
                ),
            )
        elif method == "voice.output" and params.get("voiceId") == self.voice_id:
            seq = int(params.get("seq") or 1)
            speech = str(params.get("speechId") or "")
            await self.session.push(
                "audio_output",
                vm.AudioOutput(
                    audio=str(params.get("audio") or ""),
                    format=str(params.get("mimeType") or ""),
                    id=f"{speech}:{seq}",
                    isVoiceMode=True,
                    groupId=speech,
                    chunkIndex=max(0, seq - 1),
                    isLastChunk=bool(params.get("final")),
                ),
            )
        elif method == "voice.error" and params.get("voiceId") == self.voice_id:
            log.info("tswire: voice %s: %s", self.voice_id, params.get("message"))


def room(session: ClientSession) -> VoiceRoom:
    found = session.extra.get(EXTRA_KEY)
    if isinstance(found, VoiceRoom):
        return found
    created = VoiceRoom(session)
    session.extra[EXTRA_KEY] = created
    session.listeners.append(created.on_notification)
    return created


def _decode(audio: str) -> bytes:
    try:
        return base64.b64decode(audio, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the audio is not base64") from None


# ------------------------------------------------------------------------------ capabilities


def _state(ready: bool, reason: str) -> vm.CapabilityState:
    return vm.CapabilityState(enabled=ready, reason="" if ready else reason)


async def capabilities(session: ClientSession) -> vm.ServerCapabilities | None:
    """What ``server_info`` advertises; ``None`` (the app hides voice) when the session may
    not ask."""
    try:
        got = await session.call("config.get", {})
        engines = await session.call("speech.engines", {})
    except RpcFailure as exc:
        log.debug("tswire: no voice capabilities: %s", exc)
        return None
    features = (got.get("resolved") or {}).get("features") or {}
    sites: dict[str, str] = engines.get("sites") or {}

    def missing(role: str, path: str) -> str | None:
        provider = sites.get(path)
        for item in engines.get(role) or []:
            if item.get("name") == provider:
                unavailable = item.get("unavailable")
                return str(unavailable) if unavailable else None
        return f"the {provider!r} engine is not installed"

    dictation = features.get("dictation") or {}
    stt = missing("stt", "features.dictation.stt")
    if not dictation.get("enabled", True):
        dictation_state = _state(False, "Dictation is disabled in daemon config.")
    elif stt is not None:
        dictation_state = _state(False, f"Dictation is unavailable: {stt}.")
    else:
        dictation_state = _state(True, "")
    voice = features.get("voiceMode") or {}
    voice_missing = missing("stt", "features.voiceMode.stt") or missing(
        "tts", "features.voiceMode.tts"
    )
    turn = ((voice.get("turnDetection") or {}).get("provider")) or "local"
    if not voice.get("enabled", True):
        voice_state = _state(False, "Realtime voice is disabled in daemon config.")
    elif turn != "local":
        voice_state = _state(
            False, "Realtime voice is unavailable: turn detection must be local here."
        )
    elif voice_missing is not None:
        voice_state = _state(False, f"Realtime voice is unavailable: {voice_missing}.")
    else:
        voice_state = _state(True, "")
    return vm.ServerCapabilities(
        voice=vm.VoiceCapabilities(dictation=dictation_state, voice=voice_state)
    )


# --------------------------------------------------------------------------------- dictation


async def _dictation_error(
    session: ClientSession, theirs: str, error: str, *, retryable: bool, code: str | None = None
) -> None:
    await session.push(
        "dictation_stream_error",
        vm.DictationError(dictationId=theirs, error=error, retryable=retryable, reasonCode=code),
    )


async def dictation_start(session: ClientSession, msg: vm.DictationStart) -> None:
    voice = room(session)
    if msg.dictationId not in voice.dictations and len(voice.dictations) >= MAX_DICTATIONS:
        await _dictation_error(
            session,
            msg.dictationId,
            f"too many dictations open on this connection (at most {MAX_DICTATIONS})",
            retryable=True,
            code="too_many_dictations",
        )
        return
    previous = voice.dictations.get(msg.dictationId)
    params: dict[str, Any] = {"mimeType": msg.format}
    if previous is not None:
        params = {"dictationId": previous.ours}
    try:
        started = await session.call("dictation.start", params)
    except RpcFailure as exc:
        await _dictation_error(
            session,
            msg.dictationId,
            exc.message,
            retryable=exc.code == "rate_limited",
            code=exc.code,
        )
        return
    ours = str(started["dictationId"])
    voice.dictations[msg.dictationId] = previous or _Dictation(ours)
    voice.by_ours[ours] = msg.dictationId
    await session.push(
        "dictation_stream_ack",
        vm.DictationAck(dictationId=msg.dictationId, ackSeq=int(started["ackedSeq"]) - 1),
    )


async def dictation_chunk(session: ClientSession, msg: vm.DictationChunk) -> None:
    voice = room(session)
    entry = voice.dictations.get(msg.dictationId)
    if entry is None:
        await _dictation_error(
            session, msg.dictationId, "no such dictation (start it first)", retryable=False
        )
        return
    try:
        size = len(_decode(msg.audio))
    except ValueError as exc:
        await _dictation_error(session, msg.dictationId, str(exc), retryable=False)
        return
    if voice.held() + size > MAX_SESSION_AUDIO_BYTES:
        await _cancel(session, voice, msg.dictationId)
        await _dictation_error(
            session,
            msg.dictationId,
            f"too much audio on this connection (at most {MAX_SESSION_AUDIO_BYTES} bytes)",
            retryable=False,
            code="audio_too_large",
        )
        return
    try:
        acked = await session.call(
            "dictation.chunk", {"dictationId": entry.ours, "seq": msg.seq + 1, "audio": msg.audio}
        )
    except RpcFailure as exc:
        if exc.code == "conflict" and "ackedSeq" in exc.data:
            # A gap: acknowledge what the daemon holds, the client sends the rest again.
            await session.push(
                "dictation_stream_ack",
                vm.DictationAck(dictationId=msg.dictationId, ackSeq=int(exc.data["ackedSeq"]) - 1),
            )
            return
        await _dictation_error(
            session, msg.dictationId, exc.message, retryable=False, code=exc.code
        )
        return
    if not acked.get("duplicate"):
        entry.size += size
    await session.push(
        "dictation_stream_ack",
        vm.DictationAck(dictationId=msg.dictationId, ackSeq=int(acked["ackedSeq"]) - 1),
    )


async def dictation_finish(session: ClientSession, msg: vm.DictationFinish) -> None:
    voice = room(session)
    entry = voice.dictations.get(msg.dictationId)
    if entry is None:
        await _dictation_error(
            session, msg.dictationId, "no such dictation (start it first)", retryable=False
        )
        return
    await session.push(
        "dictation_stream_finish_accepted",
        vm.DictationFinishAccepted(dictationId=msg.dictationId, timeoutMs=FINISH_TIMEOUT_MS),
    )
    try:
        done = await session.call(
            "dictation.finish", {"dictationId": entry.ours, "lastSeq": msg.finalSeq + 1}
        )
    except RpcFailure as exc:
        await _dictation_error(
            session,
            msg.dictationId,
            exc.message,
            retryable=exc.code in ("conflict", "unavailable", "rate_limited"),
            code=exc.code,
        )
        return
    voice.forget(msg.dictationId)
    await session.push(
        "dictation_stream_final",
        vm.DictationText(dictationId=msg.dictationId, text=str(done.get("text") or "")),
    )


async def _cancel(session: ClientSession, voice: VoiceRoom, theirs: str) -> None:
    entry = voice.dictations.get(theirs)
    voice.forget(theirs)
    if entry is None:
        return
    try:
        await session.call("dictation.cancel", {"dictationId": entry.ours})
    except RpcFailure as exc:
        log.debug("tswire: dictation %s cancel: %s", theirs, exc)


async def dictation_cancel(session: ClientSession, msg: vm.DictationCancel) -> None:
    await _cancel(session, room(session), msg.dictationId)


# ------------------------------------------------------------------------------- voice mode


async def _stop_voice(session: ClientSession, voice: VoiceRoom) -> None:
    voice_id, voice.voice_id, voice.agent_id = voice.voice_id, None, None
    if voice_id is None:
        return
    try:
        await session.call("voice.stop", {"voiceId": voice_id})
    except RpcFailure as exc:
        log.debug("tswire: voice %s stop: %s", voice_id, exc)


async def _start_voice(session: ClientSession, voice: VoiceRoom, agent: str, fmt: str) -> None:
    started = await session.call("voice.start", {"agentId": agent, "mimeType": fmt})
    voice.voice_id = str(started["voiceId"])
    voice.agent_id = str(started["agentId"])
    voice.voice_format = fmt
    voice.voice_seq = int(started.get("ackedSeq") or 0)


async def set_voice_mode(session: ClientSession, msg: vm.SetVoiceMode) -> None:
    voice = room(session)
    try:
        if msg.enabled:
            if voice.voice_id is not None and voice.agent_id != msg.agentId:
                await _stop_voice(session, voice)
            if voice.voice_id is None:
                # No agentId: voice.start refuses it (invalid_params), answered below.
                await _start_voice(session, voice, msg.agentId or "", VOICE_FORMAT)
        else:
            await _stop_voice(session, voice)
    except RpcFailure as exc:
        if msg.requestId is None:
            log.info("tswire: set_voice_mode refused: %s", exc.message)
            return
        await session.push(
            "set_voice_mode_response",
            vm.SetVoiceModeReply(
                requestId=msg.requestId,
                enabled=voice.voice_id is not None,
                agentId=voice.agent_id,
                accepted=False,
                error=exc.message,
                reasonCode=exc.code,
                retryable=exc.code in ("unavailable", "rate_limited"),
            ),
        )
        return
    if msg.requestId is not None:
        await session.push(
            "set_voice_mode_response",
            vm.SetVoiceModeReply(
                requestId=msg.requestId,
                enabled=voice.voice_id is not None,
                agentId=voice.agent_id,
                accepted=True,
                error=None,
            ),
        )


def _rate(fmt: str) -> tuple[str, str]:
    base, *params = (p.strip().lower() for p in fmt.split(";"))
    rate = next((p.partition("=")[2] for p in params if p.startswith("rate=")), "16000")
    return base, rate


async def voice_audio_chunk(session: ClientSession, msg: vm.VoiceAudioChunk) -> None:
    voice = room(session)
    try:
        data = _decode(msg.audio)
    except ValueError as exc:
        log.info("tswire: voice_audio_chunk refused: %s", exc)
        return
    if voice.voice_id is not None and voice.agent_id is not None:
        if _rate(msg.format) != _rate(voice.voice_format):
            # The voice session decodes one raw PCM format: begin again in the client's.
            agent = voice.agent_id
            await _stop_voice(session, voice)
            await _start_voice(session, voice, agent, msg.format)
        voice.voice_seq += 1
        await session.call(
            "voice.audio",
            {
                "voiceId": voice.voice_id,
                "seq": voice.voice_seq,
                "audio": msg.audio,
                "endOfTurn": msg.isLast,
            },
        )
        return
    if voice.held() + len(data) > MAX_SESSION_AUDIO_BYTES:
        voice.recording, voice.recording_size = [], 0
        log.info("tswire: a recording past %d bytes was dropped", MAX_SESSION_AUDIO_BYTES)
        return
    voice.recording.append(data)
    voice.recording_size += len(data)
    if not msg.isLast:
        return
    audio, voice.recording, voice.recording_size = b"".join(voice.recording), [], 0
    result = await session.call(
        "speech.transcribe",
        {"audio": base64.b64encode(audio).decode("ascii"), "mimeType": msg.format},
    )
    await session.push(
        "transcription_result",
        vm.TranscriptionResult(
            text=str(result.get("text") or ""),
            requestId=f"rec_{secrets.token_hex(6)}",
            format=msg.format,
            byteLength=len(audio),
        ),
    )


async def abort_request(session: ClientSession, msg: vm.AbortRequest) -> None:
    voice = room(session)
    voice.recording, voice.recording_size = [], 0
    if voice.voice_id is not None:
        await session.call("voice.abort", {"voiceId": voice.voice_id})


async def audio_played(session: ClientSession, msg: vm.AudioPlayed) -> None:
    """Nothing waits for playback here (see the module docstring)."""


ROUTES: dict[str, tuple[type[BaseModel], Callable[[ClientSession, Any], Awaitable[None]]]] = {
    "set_voice_mode": (vm.SetVoiceMode, set_voice_mode),
    "voice_audio_chunk": (vm.VoiceAudioChunk, voice_audio_chunk),
    "abort_request": (vm.AbortRequest, abort_request),
    "audio_played": (vm.AudioPlayed, audio_played),
    "dictation_stream_start": (vm.DictationStart, dictation_start),
    "dictation_stream_chunk": (vm.DictationChunk, dictation_chunk),
    "dictation_stream_finish": (vm.DictationFinish, dictation_finish),
    "dictation_stream_cancel": (vm.DictationCancel, dictation_cancel),
}
"""Inbound ``type`` → (request model, handler), joined into the dispatcher's table."""
