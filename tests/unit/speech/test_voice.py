"""Voice mode on real audio: espeak-ng speaks, Silero's VAD cuts turns, pocketsphinx listens.

The agent manager is the one collaborator replaced: :class:`Agents` records what voice mode
asks of it (prompts, interrupts, approvals) the way the agent service would be asked.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import wave
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import PermissionRequest
from paseo_speech_local import LocalSpeechToText, LocalTextToSpeech
from paseo_speech_local.audio import to_pcm16k

from paseo.config import load_config
from paseo.speech.service import SpeechService
from paseo.speech.turns import RATE, ToMono16k, TurnDetector
from paseo.speech.voice import INSTRUCTIONS, VoiceSessions, is_speak_tool

from .conftest import PHRASE, TTS_SETTINGS

SILENCE = b"\0" * RATE * 2  # one second of 16 kHz mono


def _pcm(wav: bytes) -> tuple[bytes, int]:
    with wave.open(io.BytesIO(wav)) as reader:
        return reader.readframes(reader.getnframes()), reader.getframerate()


class Agents:
    """What voice mode asked the agent manager (see the module docstring)."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str]] = []
        self.interrupts: list[str] = []
        self.approved: list[tuple[str, str]] = []
        self.refreshed: list[str] = []
        self.running = True

    async def resolve(self, reference: str) -> str:
        if reference.startswith("missing"):
            raise NotFound(f"no agent {reference!r}")
        return reference

    async def refresh_tools(self, agent_id: str) -> None:
        self.refreshed.append(agent_id)

    async def prompt(self, agent_id: str, text: str) -> None:
        self.prompts.append((agent_id, text))

    async def interrupt(self, agent_id: str) -> bool:
        self.interrupts.append(agent_id)
        return self.running

    async def approve(self, agent_id: str, request_id: str) -> None:
        self.approved.append((agent_id, request_id))


class Notes:
    """A connection's notifications."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.arrived = asyncio.Event()

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))
        self.arrived.set()

    def of(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.sent if name == method]

    async def until(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        async with asyncio.timeout(60):
            while len(self.of(method)) < count:
                self.arrived.clear()
                await self.arrived.wait()
        return self.of(method)


def _sessions(agents: Agents, models_dir: Path, synthesize: Any = None) -> VoiceSessions:
    stt = LocalSpeechToText({"model": "commands", "modelsDir": str(models_dir)})
    tts = LocalTextToSpeech(TTS_SETTINGS)

    async def transcribe(wav: bytes) -> str:
        return await stt.transcribe(wav, mime_type="audio/wav")

    async def speak(text: str) -> tuple[bytes, str]:
        return await tts.synthesize(text)

    return VoiceSessions(agents, transcribe, synthesize or speak)


# --- audio conversion and turn detection ------------------------------------------------------


def test_conversion_to_16k_mono_streams_like_one_pass(spoken: bytes) -> None:
    pcm, rate = _pcm(spoken)
    whole = ToMono16k(rate, 1).convert(pcm)
    # 22.05 kHz in, 16 kHz out.
    assert abs(len(whole) // 2 - len(pcm) // 2 * RATE / rate) <= 2
    chunked = ToMono16k(rate, 1)
    pieces = [chunked.convert(pcm[i : i + 1001]) for i in range(0, len(pcm), 1001)]
    assert b"".join(pieces) == whole


def test_stereo_is_down_mixed() -> None:
    mono = bytes(range(0, 200, 2)) * 10
    stereo = b"".join(mono[i : i + 2] * 2 for i in range(0, len(mono), 2))
    assert ToMono16k(RATE, 2).convert(stereo) == mono


def test_unusable_pcm_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported PCM"):
        ToMono16k(100, 1)


def test_two_phrases_are_two_turns_and_silence_none(spoken: bytes) -> None:
    speech = to_pcm16k(spoken, "audio/wav")
    detector = TurnDetector(silence_ms=600)
    assert detector.feed(SILENCE) == []
    turns = detector.feed(speech + SILENCE + speech + SILENCE)
    assert len(turns) == 2
    # Each turn holds the phrase (about 2 s), not the silence around it.
    assert all(len(speech) * 0.8 < len(turn) < len(speech) + RATE * 2 for turn in turns)
    assert detector.flush() is None


def test_end_of_turn_ends_an_utterance_without_trailing_silence(spoken: bytes) -> None:
    detector = TurnDetector()
    assert detector.feed(to_pcm16k(spoken, "audio/wav")) == []
    assert detector.speaking
    assert detector.flush() is not None
    assert not detector.speaking


# --- a session --------------------------------------------------------------------------------


def test_an_utterance_is_transcribed_and_prompted(spoken: bytes, models_dir: Path) -> None:
    async def scenario() -> None:
        agents, notes = Agents(), Notes()
        sessions = _sessions(agents, models_dir)
        pcm, rate = _pcm(spoken)
        session = await sessions.start(
            "agent-1", mime_type=f"audio/pcm;rate={rate}", instructions=None, silence_ms=500
        )
        session.notify = notes
        assert agents.refreshed == ["agent-1"]
        half = len(pcm) // 2 // 2 * 2
        assert session.add(1, pcm[:half])
        assert not session.add(1, pcm[:half])  # a repeat
        with pytest.raises(Conflict):
            session.add(3, pcm[half:])
        assert session.add(2, pcm[half:] + b"\0" * rate * 2)
        transcript = (await notes.until("voice.transcript"))[0]
        assert transcript["text"] == PHRASE
        assert transcript["prompted"] is True
        assert transcript["stream"] == "voice"
        assert agents.prompts == [("agent-1", f"{PHRASE}\n\n{INSTRUCTIONS}")]
        await sessions.close()

    asyncio.run(scenario())


def test_speech_is_streamed_as_pcm_pieces(models_dir: Path) -> None:
    async def scenario() -> None:
        agents, notes = Agents(), Notes()
        sessions = _sessions(agents, models_dir)
        session = await sessions.start(
            "agent-1", mime_type="audio/pcm", instructions="say it", silence_ms=800
        )
        session.notify = notes
        said, (speech_id, chunks, mime) = await sessions.speak("agent-1", "the gate is locked")
        assert said is session
        pieces = notes.of("voice.output")
        assert len(pieces) == chunks >= 2
        assert mime == "audio/pcm;rate=22050;channels=1"
        assert pieces[0]["text"] == "the gate is locked"
        assert [p["final"] for p in pieces] == [False] * (chunks - 1) + [True]
        assert {p["speechId"] for p in pieces} == {speech_id}
        audio = b"".join(base64.b64decode(p["audio"]) for p in pieces)
        # Over a second of speech at 22.05 kHz.
        assert len(audio) > 22050 * 2
        with pytest.raises(Conflict, match="not attached"):
            await sessions.speak("agent-2", "hello")
        await sessions.close()

    asyncio.run(scenario())


def test_abort_cuts_off_speech_and_interrupts_the_turn(models_dir: Path) -> None:
    async def scenario() -> None:
        agents = Agents()
        started, release = asyncio.Event(), asyncio.Event()

        async def slow(text: str) -> tuple[bytes, str]:
            started.set()
            await release.wait()
            return b"", "audio/wav"

        sessions = _sessions(agents, models_dir, synthesize=slow)
        session = await sessions.start(
            "agent-1", mime_type="audio/pcm", instructions=None, silence_ms=800
        )
        speaking = asyncio.create_task(sessions.speak("agent-1", "a long answer"))
        await started.wait()
        assert await session.abort() == (1, True)
        with pytest.raises(Conflict, match="interrupted"):
            await speaking
        assert agents.interrupts == ["agent-1"]
        await sessions.close()

    asyncio.run(scenario())


def test_one_session_per_agent_and_bad_formats_refused(models_dir: Path) -> None:
    async def scenario() -> None:
        sessions = _sessions(Agents(), models_dir)
        first = await sessions.start("a", mime_type="audio/pcm", instructions=None, silence_ms=800)
        with pytest.raises(Conflict) as caught:
            await sessions.start("a", mime_type="audio/pcm", instructions=None, silence_ms=800)
        assert caught.value.data == {"voiceId": first.id}
        with pytest.raises(InvalidParams, match="raw PCM"):
            await sessions.start("b", mime_type="audio/ogg", instructions=None, silence_ms=800)
        with pytest.raises(NotFound):
            await sessions.start(
                "missing", mime_type="audio/pcm", instructions=None, silence_ms=800
            )
        assert sessions.attached("a")
        assert not sessions.attached("b")
        assert await sessions.stop(first.id)
        assert not sessions.attached("a")
        with pytest.raises(NotFound):
            await sessions.get(first.id)

    asyncio.run(scenario())


def test_only_speak_requests_of_attached_agents_are_approved(models_dir: Path) -> None:
    async def scenario() -> None:
        agents = Agents()
        sessions = _sessions(agents, models_dir)
        await sessions.start("a", mime_type="audio/pcm", instructions=None, silence_ms=800)

        async def request(agent: str, request_id: str, tool: str) -> None:
            asked = PermissionRequest(id=request_id, title=tool, toolName=tool)
            await sessions.on_permission_requested(agent, asked)

        await request("a", "r1", "mcp__paseo__speak")
        await request("a", "r2", "Bash")
        await request("b", "r3", "mcp__paseo__speak")
        assert agents.approved == [("a", "r1")]
        await sessions.close()

    asyncio.run(scenario())


def test_speak_tool_names() -> None:
    assert is_speak_tool("speak")
    assert is_speak_tool("mcp__paseo__speak")
    assert is_speak_tool("paseo.speak")
    assert not is_speak_tool("mcp__other__speak")
    assert not is_speak_tool("speaker")
    assert not is_speak_tool(None)


# --- the service's checks ---------------------------------------------------------------------


class _Config:
    def __init__(self, tmp_path: Path, document: dict[str, Any]) -> None:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(document))
        self.resolved = load_config(path, env={}, home=tmp_path).resolved


@pytest.mark.parametrize(
    ("features", "message"),
    [
        ({"voiceMode": {"enabled": False}}, "voice mode is disabled"),
        ({"voiceMode": {"turnDetection": {"provider": "openai"}}}, "set features.voiceMode"),
    ],
)
def test_the_service_refuses_what_the_config_rules_out(
    tmp_path: Path, features: dict[str, Any], message: str
) -> None:
    from paseo.plugins.drivers import load_driver

    service = SpeechService(_Config(tmp_path, {"features": features}), load_driver, agents=Agents())

    async def notify(method: str, params: dict[str, Any]) -> None:
        return None

    with pytest.raises(Unavailable, match=message):
        asyncio.run(
            service.voice_start(
                "a", mime_type="audio/pcm", instructions=None, silence_ms=800, notify=notify
            )
        )
