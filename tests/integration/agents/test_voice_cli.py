"""The real ``paseo voice`` command against a real daemon and the scripted agent.

espeak-ng speaks a command, pocketsphinx (with a grammar) or the default engine (Whisper) hears
it, the scripted agent gets it as a prompt and calls the MCP ``speak`` tool (its ``[[mcp:…]]``
directive comes from the voice session's instructions), and the reply comes back as audio the
command saves.
"""

from __future__ import annotations

import io
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import wave
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunPaseo
from helpers.daemon_rpc import LiveDaemon, start_daemon, stop_daemon
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


class _Lines:
    """A process's stderr read by a thread, so every wait for a line is bounded."""

    def __init__(self, stream: Any) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace")
        self._reader = threading.Thread(
            target=lambda: [self.lines.put(line) for line in text], daemon=True
        )
        self._reader.start()

    def all(self) -> str:
        """Everything, once the process has ended (its stream is then at its end)."""
        self._reader.join(timeout=30)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)

    def until(self, wanted: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(wanted in line for line in self.seen):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line with {wanted!r} in {timeout:.0f}s: {self.seen}")
            try:
                self.seen.append(self.lines.get(timeout=left))
            except queue.Empty:
                continue


def test_voice_reconnects_after_a_daemon_restart(
    voice_daemon: LiveDaemon, client: Any, workdir: Path, tmp_path: Path
) -> None:
    agent_id = _agent(client, workdir)
    with wave.open(str(_espeak(PHRASE, tmp_path / "prompt.wav"))) as reader:
        rate = reader.getframerate()
        speech = reader.readframes(reader.getnframes()) + bytes(rate * 2 * 2)  # then 2 s quiet
    command = [sys.executable, "-m", "paseo", "voice", agent_id, "-"]
    process = subprocess.Popen(
        [
            *command,
            "--format",
            f"audio/pcm;rate={rate};channels=1",
            "--instructions",
            '[[mcp:speak {"text": "the gate is open"}]]',
        ],
        env={**os.environ, "PASEO_HOME": str(voice_daemon.home)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None
        err = _Lines(process.stderr)
        process.stdin.write(speech)
        process.stdin.flush()
        err.until("agent: the gate is open", 90)
        stop_daemon(voice_daemon.home)
        err.until("reconnecting", 30)
        start_daemon(voice_daemon.home, {"PASEO_AGENT_START_TIMEOUT": "5"})
        err.until("reconnected", 60)
        # The second utterance goes to a new voice session of the restarted daemon.
        process.stdin.write(speech)
        process.stdin.close()
        process.wait(timeout=120)
        assert process.stdout is not None
        out = process.stdout.read()  # a few lines: never more than the pipe holds
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    stderr = err.all()
    assert process.returncode == 0, stderr
    assert stderr.count(f"you: {PHRASE}") == 2, stderr
    assert "Traceback" not in stderr
    assert b"the gate is open" in out


def test_voice_with_the_default_engine_hears_a_free_form_command(
    agent_daemon_factory: Callable[..., LiveDaemon],
    run_paseo: RunPaseo,
    workdir: Path,
    tmp_path: Path,
) -> None:
    """No grammar, no model setting: Whisper tiny.en hears what ``speech say`` said."""
    live = agent_daemon_factory(scripted_config({}))
    from paseo.client import SyncClient

    with SyncClient(home=live.home, client_type="sdk") as client:
        agent_id = _agent(client, workdir)
    spoken = tmp_path / "said.wav"
    phrase = "show me the last error message"
    said = _paseo(run_paseo, live, "speech", "say", phrase, "--save", str(spoken))
    assert said.returncode == 0, said.stderr
    instructions = '[[mcp:speak {"text": "no errors today"}]]'
    result = _paseo(run_paseo, live, "voice", agent_id, str(spoken), "--instructions", instructions)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no errors today\n"
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("you: ")]
    heard = "".join(c for c in line.removeprefix("you: ").lower() if c.isalpha() or c == " ")
    assert heard.split() == phrase.split()
