"""Dictation: numbered chunks, acks, partials, a final, resume, expiry."""

from __future__ import annotations

import asyncio
import hashlib
import io
import wave
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Conflict, NotFound, Unavailable
from paseo_hookspecs.interfaces.speech import SpeechToText

from paseo.config import ResolvedConfig, load_config
from paseo.speech import dictation as dictation_module
from paseo.speech.dictation import Dictations
from paseo.speech.service import SpeechService


class DigestEngine(SpeechToText):
    """A third-party-style engine whose transcript is the digest of the PCM it was given, so
    a test can tell exactly which audio reached the engine."""

    fail = False
    crash = False

    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        if DigestEngine.fail:
            raise Unavailable("engine down")
        if DigestEngine.crash:
            raise RuntimeError("engine bug")
        assert mime_type == "audio/wav"
        with wave.open(io.BytesIO(audio)) as reader:
            pcm = reader.readframes(reader.getnframes())
        return f"{len(pcm)}:{hashlib.sha256(pcm).hexdigest()[:12]}:{language}"


def digest(pcm: bytes, language: str | None = None) -> str:
    return f"{len(pcm)}:{hashlib.sha256(pcm).hexdigest()[:12]}:{language}"


class _Config:
    def __init__(self, resolved: ResolvedConfig) -> None:
        self.resolved = resolved


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Inbox:
    """Collects notifications as a connection would receive them."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Event()

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.events.append((method, params))
        self.changed.set()

    async def wait_for(self, method: str) -> dict[str, Any]:
        async with asyncio.timeout(10):
            while True:
                for name, params in self.events:
                    if name == method:
                        return params
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def service(tmp_path: Path, clock: Clock) -> SpeechService:
    DigestEngine.fail = DigestEngine.crash = False
    loaded = load_config(tmp_path / "config.json", env={}, home=tmp_path)
    loads: list[tuple[str, str]] = []

    def load(group: str, name: str) -> type[SpeechToText]:
        loads.append((group, name))
        return DigestEngine

    built = SpeechService(_Config(loaded.resolved), load, Dictations(clock))
    built.loads = loads  # type: ignore[attr-defined]
    return built


PCM = [bytes([n]) * 3200 for n in range(1, 6)]  # five 0.1 s chunks of 16 kHz mono


async def _start(service: SpeechService, inbox: Inbox, **options: Any) -> str:
    dictation = await service.dictation_start(
        mime_type="audio/pcm;rate=16000;channels=1",
        language=options.get("language"),
        resume=None,
        notify=inbox,
        partials=options.get("partials", True),
    )
    return dictation.id


def test_chunks_are_acknowledged_and_the_final_covers_them_all(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        for seq, chunk in enumerate(PCM, 1):
            dictation, stored = await service.dictation_chunk(dictation_id, seq, chunk, inbox)
            assert (dictation.acked_seq, stored) == (seq, True)
        dictation, text = await service.dictation_finish(dictation_id, len(PCM), inbox)
        assert text == digest(b"".join(PCM))
        assert dictation.state == "finished"
        final = await inbox.wait_for("dictation.final")
        assert final["text"] == text
        assert final["stream"] == "dictation"
        assert final["ackedSeq"] == len(PCM)

    asyncio.run(run())


def test_a_repeated_chunk_is_acknowledged_once_and_not_stored_twice(
    service: SpeechService,
) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        await service.dictation_chunk(dictation_id, 2, PCM[1], inbox)
        dictation, stored = await service.dictation_chunk(dictation_id, 2, PCM[1], inbox)
        assert (dictation.acked_seq, stored) == (2, False)
        dictation, stored = await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        assert stored is False
        _, text = await service.dictation_finish(dictation_id, 2, inbox)
        assert text == digest(PCM[0] + PCM[1])

    asyncio.run(run())


def test_a_gap_is_refused_with_the_acknowledged_seq(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        with pytest.raises(Conflict) as caught:
            await service.dictation_chunk(dictation_id, 3, PCM[2], inbox)
        assert caught.value.data == {"ackedSeq": 1}

    asyncio.run(run())


def test_finish_refuses_when_chunks_are_missing(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        with pytest.raises(Conflict) as caught:
            await service.dictation_finish(dictation_id, 2, inbox)
        assert caught.value.data == {"ackedSeq": 1}
        # The dictation is still open: the client sends chunk 2 and finishes.
        await service.dictation_chunk(dictation_id, 2, PCM[1], inbox)
        _, text = await service.dictation_finish(dictation_id, 2, inbox)
        assert text == digest(PCM[0] + PCM[1])

    asyncio.run(run())


def test_finish_again_returns_the_same_final_and_no_more_audio_is_taken(
    service: SpeechService,
) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        _, first = await service.dictation_finish(dictation_id, 1, inbox)
        _, again = await service.dictation_finish(dictation_id, None, Inbox())
        assert first == again
        with pytest.raises(Conflict):
            await service.dictation_chunk(dictation_id, 2, PCM[1], inbox)

    asyncio.run(run())


def test_partials_arrive_while_audio_does(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, language="en")
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        partial = await inbox.wait_for("dictation.partial")
        assert partial == {
            "dictationId": dictation_id,
            "text": digest(PCM[0], "en"),
            "ackedSeq": 1,
            "stream": "dictation",
        }

    asyncio.run(run())


def test_a_dictation_outlives_its_connection_and_resumes(service: SpeechService) -> None:
    async def run() -> None:
        first, second = Inbox(), Inbox()
        dictation_id = await _start(service, first, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], first)
        await service.dictation_chunk(dictation_id, 2, PCM[1], first)
        # The first connection is gone; a new one asks where the dictation stands.
        resumed = await service.dictation_start(
            mime_type="ignored/when-resuming", language=None, resume=dictation_id, notify=second
        )
        assert (resumed.id, resumed.acked_seq) == (dictation_id, 2)
        await service.dictation_chunk(dictation_id, 3, PCM[2], second)
        _, text = await service.dictation_finish(dictation_id, 3, second)
        assert text == digest(b"".join(PCM[:3]))
        assert await second.wait_for("dictation.final")
        assert not [e for e in first.events if e[0] == "dictation.final"]

    asyncio.run(run())


def test_an_idle_dictation_is_forgotten(service: SpeechService, clock: Clock) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        clock.now += dictation_module.IDLE_TTL - 1
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)  # still there
        clock.now += dictation_module.IDLE_TTL + 1
        with pytest.raises(NotFound):
            await service.dictation_chunk(dictation_id, 2, PCM[1], inbox)

    asyncio.run(run())


def test_cancel_drops_the_dictation(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        assert await service.dictation_cancel(dictation_id) is True
        assert await service.dictation_cancel(dictation_id) is False
        with pytest.raises(NotFound):
            await service.dictation_finish(dictation_id, None, inbox)

    asyncio.run(run())


def test_a_failed_final_is_reported_and_can_be_retried(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        DigestEngine.fail = True
        with pytest.raises(Unavailable):
            await service.dictation_finish(dictation_id, 1, inbox)
        error = await inbox.wait_for("dictation.error")
        assert (error["code"], error["message"]) == ("unavailable", "engine down")
        DigestEngine.fail = False
        _, text = await service.dictation_finish(dictation_id, 1, inbox)
        assert text == digest(PCM[0])

    asyncio.run(run())


def test_an_engine_bug_is_reported_as_unavailable(service: SpeechService) -> None:
    async def run() -> None:
        inbox = Inbox()
        dictation_id = await _start(service, inbox, partials=False)
        await service.dictation_chunk(dictation_id, 1, PCM[0], inbox)
        DigestEngine.crash = True
        with pytest.raises(Unavailable, match="engine bug"):
            await service.dictation_finish(dictation_id, 1, inbox)
        DigestEngine.crash = False
        _, text = await service.dictation_finish(dictation_id, 1, inbox)
        assert text == digest(PCM[0])

    asyncio.run(run())


def test_the_engine_is_chosen_from_the_dictation_site(service: SpeechService) -> None:
    async def run() -> None:
        dictation = await service.dictation_start(
            mime_type="audio/wav", language=None, resume=None, notify=Inbox()
        )
        assert dictation.engine_name == "local"
        assert service.loads == [("paseo.speech.stt", "local")]  # type: ignore[attr-defined]

    asyncio.run(run())


def test_too_many_dictations_are_refused(
    service: SpeechService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dictation_module, "MAX_DICTATIONS", 2)

    async def run() -> None:
        await _start(service, Inbox())
        await _start(service, Inbox())
        with pytest.raises(Unavailable):
            await _start(service, Inbox())

    asyncio.run(run())
