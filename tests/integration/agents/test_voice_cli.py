"""The real ``paseo voice`` command against a real daemon and the scripted agent.

espeak-ng speaks a command, pocketsphinx (with a grammar) hears it, the scripted agent gets
it as a prompt and calls the MCP ``speak`` tool (its ``[[mcp:…]]`` directive comes from the
voice session's instructions), and the reply comes back as audio the command saves.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import wave
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunPaseo
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for

from .conftest import scripted_config

PHRASE = "open the gate now"
GRAMMAR = """#JSGF V1.0;
grammar commands;
public <command> = (open | close | lock) the (door | window | gate) [please | now];
"""


@pytest.fixture
def voice_daemon(agent_daemon_factory: Callable[..., LiveDaemon], tmp_path: Path) -> LiveDaemon:
    models = tmp_path / "models"
    (models / "pocketsphinx" / "commands").mkdir(parents=True)
    (models / "pocketsphinx" / "commands" / "commands.gram").write_text(GRAMMAR)
    site = {"provider": "local", "model": "commands"}
    return agent_daemon_factory(
        scripted_config(
            {
                "providers": {"local": {"modelsDir": str(models)}},
                "features": {"voiceMode": {"stt": site, "tts": {"provider": "local"}}},
            }
        )
    )


@pytest.fixture
def client(voice_daemon: LiveDaemon) -> Iterator[Any]:
    """A client of the voice daemon (instead of the agent daemon's)."""
    from paseo.client import SyncClient

    with SyncClient(home=voice_daemon.home, client_type="sdk") as connected:
        yield connected


def _espeak(text: str, target: Path) -> Path:
    binary = shutil.which("espeak-ng")
    if binary is None:
        pytest.fail("espeak-ng is not installed: run scripts/test (it installs it)")
    command = [binary, "-v", "en-us", "-s", "140", "-w", str(target), text]
    subprocess.run(command, check=True, timeout=60)
    return target


def _agent(client: Any, workdir: Path) -> str:
    body = {"provider": "scripted", "cwd": str(workdir)}
    return str(client.call("agent.create", body)["agent"]["id"])


def _paseo(run_paseo: RunPaseo, live: LiveDaemon, *args: str) -> Any:
    return run_paseo(*args, env={"PASEO_HOME": str(live.home)}, timeout=120)


def test_voice_speaks_a_prompt_and_saves_the_spoken_reply(
    voice_daemon: LiveDaemon, client: Any, workdir: Path, run_paseo: RunPaseo, tmp_path: Path
) -> None:
    agent_id = _agent(client, workdir)
    spoken = _espeak(PHRASE, tmp_path / "prompt.wav")
    instructions = '[[mcp:speak {"text": "the gate is open"}]]'
    saved = tmp_path / "reply.wav"
    result = _paseo(
        run_paseo,
        voice_daemon,
        "voice",
        agent_id,
        str(spoken),
        "--instructions",
        instructions,
        "--save",
        str(saved),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the gate is open\n"
    assert f"you: {PHRASE}" in result.stderr
    with wave.open(str(saved)) as reader:
        assert reader.getnframes() > reader.getframerate() // 2
    # The agent's tool call returned what voice mode sent.
    reply = client.call("agent.wait", {"agentId": agent_id, "timeout": 0})["lastMessage"]
    assert json.loads(reply.removeprefix("mcp: "))["chunks"] >= 1
    # The command stopped its session at the end: a new one can attach.
    fresh = client.call("voice.start", {"agentId": agent_id}, timeout=60)
    assert client.call("voice.stop", {"voiceId": fresh["voiceId"]})["stopped"] is True


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"OggS" + bytes(64), "convert it first"),
        (b"RIFF\0\0\0\0WAVEjunk", "not a PCM WAV file"),
    ],
    ids=["missing", "ogg", "broken-wav"],
)
def test_bad_input_is_a_clean_error(
    voice_daemon: LiveDaemon,
    client: Any,
    workdir: Path,
    run_paseo: RunPaseo,
    tmp_path: Path,
    content: bytes | None,
    message: str,
) -> None:
    agent_id = _agent(client, workdir)
    source = tmp_path / "input.audio"
    if content is not None:
        source.write_bytes(content)
    result = _paseo(run_paseo, voice_daemon, "voice", agent_id, str(source))
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_silence_unrecognised_speech_and_unknown_agents_are_clean_errors(
    voice_daemon: LiveDaemon, client: Any, workdir: Path, run_paseo: RunPaseo, tmp_path: Path
) -> None:
    agent_id = _agent(client, workdir)
    silence = tmp_path / "silence.wav"
    with wave.open(str(silence), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(bytes(32000 * 2))
    quiet = _paseo(run_paseo, voice_daemon, "voice", agent_id, str(silence))
    assert quiet.returncode == 1
    assert "heard no speech" in quiet.stderr
    # pocketsphinx does not follow this phrase, grammar or not: speech, but no words.
    mumbled = _espeak("lock the gate now", tmp_path / "mumbled.wav")
    unheard = _paseo(run_paseo, voice_daemon, "voice", agent_id, str(mumbled))
    assert unheard.returncode == 1
    assert "recognised no words" in unheard.stderr
    unknown = _paseo(run_paseo, voice_daemon, "voice", "no-such-agent", str(silence))
    assert unknown.returncode == 1
    assert "not_found" in unknown.stderr
    assert "Traceback" not in quiet.stderr + unheard.stderr + unknown.stderr


def test_ctrl_c_aborts_the_agents_turn_and_detaches(
    voice_daemon: LiveDaemon, client: Any, workdir: Path, tmp_path: Path
) -> None:
    agent_id = _agent(client, workdir)
    spoken = _espeak(PHRASE, tmp_path / "prompt.wav")
    command = [sys.executable, "-m", "paseo", "voice", agent_id, str(spoken)]
    process = subprocess.Popen(
        [*command, "--instructions", "[[slow:120]]"],
        env={**os.environ, "PASEO_HOME": str(voice_daemon.home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def running() -> bool:
            agent = client.call("agent.get", {"agentId": agent_id})["agent"]
            return bool(agent["lastStatus"] == "running")

        wait_for(running, timeout=60, what="the spoken prompt's turn to start")
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    waited = client.call("agent.wait", {"agentId": agent_id, "timeout": 30}, timeout=40)
    assert waited["outcome"] == "idle", waited
    entries = client.call("agent.timeline", {"agentId": agent_id, "limit": 5, "tail": True})
    assert entries["entries"][-1]["event"]["type"] == "turn_canceled"
    # The session was stopped on the way out: a new one can attach.
    fresh = client.call("voice.start", {"agentId": agent_id}, timeout=60)
    assert client.call("voice.stop", {"voiceId": fresh["voiceId"]})["stopped"] is True
