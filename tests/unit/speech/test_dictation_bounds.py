"""Dictation cannot hold the daemon: partial passes cost the audio once (not once per chunk),
passes are bounded over all dictations, a sender that outruns the engine waits for its acks,
and the audio of all dictations together is bounded."""

from __future__ import annotations

import asyncio
import io
import wave
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.interfaces.speech import SpeechToText

from paseo.config import load_config
from paseo.speech import dictation as dictation_module
from paseo.speech.dictation import Dictations
from paseo.speech.service import SpeechService

from .test_dictation import Inbox, _Config, _start, digest

WINDOW = 3200
"""Bytes of a 0.1 s partial window of 16 kHz mono PCM (the tests' PARTIAL_WINDOW_SECONDS)."""


class GatedEngine(SpeechToText):
    """Transcribes to the digest of its PCM, but only while :attr:`gate` is open; records the
    PCM size of every call and how many ran at once."""

    gate: asyncio.Event
    sizes: list[int]
    running = 0
    most_running = 0

    @classmethod
    def reset(cls) -> None:
        cls.gate = asyncio.Event()
        cls.gate.set()
        cls.sizes = []
        cls.running = cls.most_running = 0

    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        cls = GatedEngine
        cls.running += 1
        cls.most_running = max(cls.most_running, cls.running)
        try:
            await cls.gate.wait()
            with wave.open(io.BytesIO(audio)) as reader:
                pcm = reader.readframes(reader.getnframes())
            cls.sizes.append(len(pcm))
            return digest(pcm, language)
        finally:
            cls.running -= 1


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SpeechService:
    monkeypatch.setattr(dictation_module, "PARTIAL_WINDOW_SECONDS", 0.1)
    loaded = load_config(tmp_path / "config.json", env={}, home=tmp_path)

    def load(group: str, name: str) -> type[SpeechToText]:
        return GatedEngine

    return SpeechService(_Config(loaded.resolved), load, Dictations())


async def _spin() -> None:
    """Let every runnable task run until it blocks (no time passes: nothing is timed)."""
    for _ in range(50):
        await asyncio.sleep(0)


async def _until(predicate: Any) -> None:
    """Poll, bounded: audio is assembled in worker threads, which signal no event."""
    async with asyncio.timeout(30):
        while not predicate():  # noqa: ASYNC110 - nothing to wait on but the condition
            await asyncio.sleep(0.01)


def test_partial_passes_transcribe_each_window_once(service: SpeechService) -> None:
    chunks = [bytes([n]) * WINDOW for n in range(1, 11)]

    async def run() -> None:
        GatedEngine.reset()
        inbox = Inbox()
        dictation_id = await _start(service, inbox)
        for seq, chunk in enumerate(chunks, 1):
            await service.dictation_chunk(dictation_id, seq, chunk, inbox)
            # Each chunk's partial finishes before the next: the worst case for re-passes.
            await _until(lambda s=seq: any(e[1]["ackedSeq"] == s for e in inbox.events))
        last = [e[1] for e in inbox.events if e[0] == "dictation.partial"][-1]
        # Earlier windows keep their text; the partial is all of them in order.
        assert last["text"] == " ".join(digest(chunk) for chunk in chunks)
        # Linear: every byte reached the engine at most twice (as a tail, then as its window).
        # Re-transcribing everything at each chunk sent 55 windows' worth for 10.
        assert sum(GatedEngine.sizes) <= 2 * len(chunks) * WINDOW, GatedEngine.sizes
        _, text = await service.dictation_finish(dictation_id, len(chunks), inbox)
        assert text == digest(b"".join(chunks))

    asyncio.run(run())


def test_a_sender_ahead_of_the_partials_waits_for_its_ack(service: SpeechService) -> None:
    async def run() -> None:
        GatedEngine.reset()
        GatedEngine.gate.clear()
        inbox = Inbox()
        dictation_id = await _start(service, inbox)
        # The first chunk's pass is stuck in the engine: two windows behind are allowed.
        for seq in (1, 2):
            await service.dictation_chunk(dictation_id, seq, b"\x01" * WINDOW, inbox)
        ahead = asyncio.ensure_future(
            service.dictation_chunk(dictation_id, 3, b"\x01" * WINDOW, inbox)
        )
        await _spin()
        assert not ahead.done(), "the ack was sent while the partials were 3 windows behind"
        GatedEngine.gate.set()
        async with asyncio.timeout(30):
            dictation, stored = await ahead
        assert (dictation.acked_seq, stored) == (3, True)

    asyncio.run(run())


def test_transcriptions_are_bounded_over_every_dictation(service: SpeechService) -> None:
    async def run() -> None:
        GatedEngine.reset()
        GatedEngine.gate.clear()
        inbox = Inbox()
        for _ in range(5):
            dictation_id = await _start(service, inbox)
            await service.dictation_chunk(dictation_id, 1, b"\x02" * WINDOW, inbox)
        one_shot = asyncio.ensure_future(
            service.transcribe(b"\x03" * WINDOW, mime_type="audio/pcm")
        )
        await _until(lambda: GatedEngine.running >= dictation_module.MAX_TRANSCRIPTIONS)
        await _spin()
        assert GatedEngine.running == dictation_module.MAX_TRANSCRIPTIONS
        GatedEngine.gate.set()
        async with asyncio.timeout(30):
            text, _engine = await one_shot
        assert text == digest(b"\x03" * WINDOW)
        await _until(lambda: len(GatedEngine.sizes) == 6)
        assert GatedEngine.most_running == dictation_module.MAX_TRANSCRIPTIONS

    asyncio.run(run())


def test_the_audio_of_all_dictations_together_is_bounded(
    service: SpeechService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dictation_module, "MAX_TOTAL_AUDIO_BYTES", 3 * WINDOW)

    async def run() -> None:
        GatedEngine.reset()
        inbox = Inbox()
        first = await _start(service, inbox, partials=False)
        second = await _start(service, inbox, partials=False)
        await service.dictation_chunk(first, 1, b"\x01" * (2 * WINDOW), inbox)
        await service.dictation_chunk(second, 1, b"\x01" * WINDOW, inbox)
        with pytest.raises(Unavailable, match="finish or cancel a dictation"):
            await service.dictation_chunk(second, 2, b"\x01", inbox)
        # A repeat of a stored chunk is still acknowledged.
        _, stored = await service.dictation_chunk(second, 1, b"\x01" * WINDOW, inbox)
        assert stored is False
        await service.dictation_cancel(first)
        _, stored = await service.dictation_chunk(second, 2, b"\x01", inbox)
        assert stored is True

    asyncio.run(run())
