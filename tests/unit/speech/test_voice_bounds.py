"""Voice mode's listening is bounded: continuous speech is cut into utterances of at most
``MAX_UTTERANCE_MS`` (then hearing goes on), and utterances waiting for transcription are
bounded, a sender ahead of them waiting for its acks."""

from __future__ import annotations

import asyncio
from typing import Any

from paseo_speech_local.audio import to_pcm16k

from paseo.speech import voice as voice_module
from paseo.speech.turns import MAX_UTTERANCE_MS, RATE, TurnDetector
from paseo.speech.voice import VoiceSessions

from .test_voice import SILENCE, Agents, Notes

BYTES_PER_MS = RATE * 2 // 1000


def _continuous(spoken: bytes, seconds: int) -> bytes:
    """The phrase over and over with no pause: speech that never stops."""
    phrase = to_pcm16k(spoken, "audio/wav")
    return phrase * (seconds * RATE * 2 // len(phrase) + 1)


def test_continuous_speech_is_cut_into_bounded_utterances(spoken: bytes) -> None:
    detector = TurnDetector(silence_ms=2000)
    speech = _continuous(spoken, 100)
    pieces: list[bytes] = []
    for offset in range(0, len(speech), 32000):
        pieces += detector.feed(speech[offset : offset + 32000])
    # 100 s of speech with no 2 s pause: three full pieces so far, and still hearing.
    assert len(pieces) >= 3
    assert all(len(piece) <= MAX_UTTERANCE_MS * BYTES_PER_MS for piece in pieces)
    assert sum(len(piece) for piece in pieces) >= 0.8 * 90_000 * BYTES_PER_MS
    assert detector.speaking
    rest = detector.flush()
    assert rest is not None
    assert len(rest) <= MAX_UTTERANCE_MS * BYTES_PER_MS


def test_utterances_waiting_for_transcription_are_bounded(spoken: bytes) -> None:
    phrase = to_pcm16k(spoken, "audio/wav")
    gate = asyncio.Event()
    heard: list[int] = []

    async def transcribe(wav: bytes) -> str:
        heard.append(len(wav))
        await gate.wait()
        return "close the window please"

    async def speak(text: str) -> tuple[bytes, str]:
        raise AssertionError("nothing is spoken here")

    async def spin() -> None:
        for _ in range(50):
            await asyncio.sleep(0)

    async def scenario() -> None:
        agents, notes = Agents(), Notes()
        sessions = VoiceSessions(agents, transcribe, speak)
        session = await sessions.start(
            "agent-1", mime_type="audio/pcm;rate=16000", instructions=None, silence_ms=500
        )
        session.notify = notes
        pending = voice_module.MAX_PENDING_UTTERANCES
        # One utterance per chunk; the first is taken by the transcriber and stays there.
        seq = 0
        for _ in range(pending + 1):
            seq += 1
            assert session.add(seq, phrase + SILENCE)
            await session.caught_up()  # returns at once: not behind yet
        seq += 1
        assert session.add(seq, phrase + SILENCE)
        ack: asyncio.Future[Any] = asyncio.ensure_future(session.caught_up())
        await spin()
        assert not ack.done(), "the ack went out with more utterances waiting than allowed"
        # A sender that does not wait: the oldest waiting utterances are dropped, and said so.
        for _ in range(voice_module.MAX_QUEUED_UTTERANCES):
            seq += 1
            session.add(seq, phrase + SILENCE)
        errors = await notes.until("voice.error")
        assert "dropped" in errors[0]["message"]
        assert session._queue.qsize() <= voice_module.MAX_QUEUED_UTTERANCES
        gate.set()
        async with asyncio.timeout(60):
            await ack
            await notes.until("voice.transcript", 1 + voice_module.MAX_QUEUED_UTTERANCES)
        assert session.utterances == seq
        await sessions.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))
