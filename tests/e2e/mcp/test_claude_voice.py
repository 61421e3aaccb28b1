"""Voice mode with the real Claude Code behind the fake model.

espeak-ng speaks a command to WAV; ``paseo voice`` streams it to voice mode, which detects the
utterance, transcribes it (the default local engine, Whisper tiny.en, with no model configured)
and prompts the agent. The session's instructions carry the fake model's script (``CALL_TOOL:
speak``), so Claude Code calls ``mcp__paseo__speak``: offered only while voice mode is
attached, its permission request (Claude Code's default mode asks for MCP tools) approved by
voice mode, its text synthesized by espeak-ng and streamed back as ``voice.output``. ``abort``
interrupts the agent's turn.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import threading
import wave
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import (
    TURN_TIMEOUT,
    RealDaemon,
    item_type,
    poll,
    provider_settings,
    timeline,
)

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

PHRASE = "open the door please"
REPLY = "the door is open now"


def _words(text: str) -> list[str]:
    """Whisper writes a sentence ("Open the door please."): compared as words."""
    return re.sub(r"[^a-z ]", "", text.lower()).split()


def _speak_to_wav(text: str, target: Path) -> Path:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.fail("espeak-ng is not installed: run scripts/test (it installs it)")
    # Trailing silence is not needed: the end of the file ends the utterance.
    subprocess.run(
        [espeak, "-v", "en-us", "-s", "140", "-w", str(target), text], check=True, timeout=60
    )
    return target


def _configure(daemon: RealDaemon, fake: FakeModelServer, root: Path) -> None:
    settings = provider_settings("claude", fake, root / "programs")
    # Claude Code defers MCP tools behind ToolSearch by default; the scripted model calls the
    # tool directly, as a model that was shown it would.
    settings["env"]["ENABLE_TOOL_SEARCH"] = "false"
    daemon.configure({"claude": settings})
    config_file = daemon.home / "config.json"
    config = json.loads(config_file.read_text())
    config["features"] = {
        "voiceMode": {
            "stt": {"provider": "local"},
            "tts": {"provider": "local", "voice": "en-us"},
        }
    }
    config_file.write_text(json.dumps(config))


def _agent(client: Any, work: Path, prompt: str) -> str:
    agent = client.call(
        "agent.create",
        {"provider": "claude", "cwd": str(work), "modeId": "default", "initialPrompt": prompt},
    )["agent"]
    client.call(
        "agent.wait", {"agentId": agent["id"], "timeout": TURN_TIMEOUT}, timeout=TURN_TIMEOUT + 10
    )
    return str(agent["id"])


def test_a_spoken_prompt_reaches_claude_and_its_speak_comes_back_as_audio(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    _configure(daemon, fake, tmp_path)
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    spoken = _speak_to_wav(PHRASE, tmp_path / "prompt.wav")
    with daemon.client() as client:
        # Without voice mode there is no speak tool.
        agent_id = _agent(client, work, 'CALL_TOOL: speak :: {"text": "nobody hears this"}')
        first = client.call("agent.wait", {"agentId": agent_id, "timeout": 0})
        assert "no speak tool offered" in (first["lastMessage"] or ""), first

    instructions = f"CALL_TOOL: speak :: {json.dumps({'text': REPLY})}"
    replies = tmp_path / "replies"
    result = daemon.cli(
        "voice",
        agent_id,
        str(spoken),
        "--instructions",
        instructions,
        "--save",
        f"{replies}/",
        "-o",
        "json",
    )
    answer = json.loads(result.stdout)
    assert [_words(t["text"]) for t in answer["transcripts"]] == [PHRASE.split()], answer
    assert answer["outcome"] == "idle", answer
    assert [reply["text"] for reply in answer["replies"]] == [REPLY], answer
    assert answer["replies"][0]["bytes"] > 0
    assert answer["replies"][0]["mimeType"].startswith("audio/pcm;rate=")
    with wave.open(answer["files"][0]) as saved:
        # Several words of espeak-ng speech: well over half a second.
        assert saved.getnframes() > saved.getframerate() // 2, answer

    with daemon.client() as client:
        entries = timeline(client, agent_id)
    prompts = [e["event"]["item"]["text"] for e in entries if item_type(e) == "user_message"]
    heard, _, instructed = prompts[-1].partition("\n\n")
    assert _words(heard) == PHRASE.split(), prompts
    assert instructed == instructions, prompts
    calls = [e["event"]["item"] for e in entries if item_type(e) == "tool_call"]
    speak = [c for c in calls if c["name"] == "mcp__paseo__speak"]
    assert speak, calls
    assert speak[-1]["status"] == "completed", calls
    requested = [e["event"]["request"] for e in entries if item_type(e) == "permission_requested"]
    resolved = [e["event"] for e in entries if item_type(e) == "permission_resolved"]
    # Claude Code's default mode asked; voice mode allowed it without a person.
    assert [r["toolName"] for r in requested] == ["mcp__paseo__speak"], requested
    assert [r["resolution"]["behavior"] for r in resolved] == ["allow"], resolved


def test_abort_interrupts_the_agents_turn(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    _configure(daemon, fake, tmp_path)
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    spoken = _speak_to_wav(PHRASE, tmp_path / "prompt.wav")
    with wave.open(str(spoken)) as reader:
        rate, pcm = reader.getframerate(), reader.readframes(reader.getnframes())
    with daemon.client() as client:
        agent_id = _agent(client, work, "[[reply:ready]]")
        heard = threading.Event()
        transcripts: list[dict[str, Any]] = []

        def on_transcript(method: str, event: dict[str, Any]) -> None:
            transcripts.append(event)
            heard.set()

        client.on("voice.transcript", on_transcript)
        voice = client.call(
            "voice.start",
            {
                "agentId": agent_id,
                "mimeType": f"audio/pcm;rate={rate};channels=1",
                # A long, slow answer: the turn is still running when abort comes.
                "instructions": "[[slow:600:0.2]]",
            },
            timeout=120,
        )
        audio = base64.b64encode(pcm).decode()
        ack = client.call(
            "voice.audio",
            {"voiceId": voice["voiceId"], "seq": 1, "audio": audio, "endOfTurn": True},
        )
        assert ack["utterances"] == 1
        assert heard.wait(TURN_TIMEOUT), "no voice.transcript"
        assert _words(transcripts[0]["text"]) == PHRASE.split()

        def streaming() -> bool:
            return any(item_type(e) == "assistant_message" for e in timeline(client, agent_id)[-5:])

        poll(streaming, timeout=TURN_TIMEOUT, what="the agent's slow answer to start")
        aborted = client.call("voice.abort", {"voiceId": voice["voiceId"]})
        assert aborted["turnInterrupted"] is True
        waited = client.call(
            "agent.wait", {"agentId": agent_id, "timeout": TURN_TIMEOUT}, timeout=TURN_TIMEOUT + 10
        )
        assert waited["outcome"] == "idle", waited
        types = [item_type(e) for e in timeline(client, agent_id)]
        assert types[-1] == "turn_canceled", types[-8:]
        assert client.call("voice.stop", {"voiceId": voice["voiceId"]})["stopped"] is True
