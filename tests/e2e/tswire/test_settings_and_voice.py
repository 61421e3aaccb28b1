"""Settings and voice over the TypeScript protocol, on a real daemon with the real local speech
engines (espeak-ng speaks, pocketsphinx transcribes): every frame the client receives is
checked against the outbound models (``client.py``)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import poll
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon

from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e

SECRET = "sk-ant-api03-not-a-real-key-0123456789"
PHRASE = "close the window please"
GRAMMAR = """#JSGF V1.0;
grammar commands;
public <command> = (open | close | lock) the (door | window | gate) [please | now];
"""
CHUNK_BYTES = 8192
SCRIPTED_PLUGIN = Path(__file__).resolve().parents[2] / "integration" / "agents" / "scripted_agent"


def _config(models: Path) -> dict[str, Any]:
    site = {"provider": "local", "model": "commands"}
    return {
        "agents": {"providers": {"claude": {"env": {"ANTHROPIC_API_KEY": SECRET}}}},
        "providers": {"local": {"modelsDir": str(models)}},
        "features": {
            "dictation": {"stt": site},
            "voiceMode": {"stt": site, "tts": {"provider": "local", "voice": "en-us"}},
        },
        "plugins": {
            "tswire": {"settings": {"listen": "127.0.0.1:0"}},
            "scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)},
        },
    }


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TsDaemon]:
    root = Path(tmp_path_factory.mktemp("tswire-settings"))
    models = root / "models"
    (models / "pocketsphinx" / "commands").mkdir(parents=True)
    (models / "pocketsphinx" / "commands" / "commands.gram").write_text(GRAMMAR)
    with RefusingProxy() as proxy:
        started = TsDaemon(root, proxy)
        (started.home / "config.json").write_text(json.dumps(_config(models), indent=2))
        started.start()
        try:
            yield started
        finally:
            started.cleanup()


@pytest.fixture(scope="module")
def spoken_pcm(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, int]:
    """:data:`PHRASE` spoken by espeak-ng: raw 16-bit mono PCM and its rate."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        pytest.fail("espeak-ng is not installed: run scripts/test (it installs it)")
    target = Path(tmp_path_factory.mktemp("spoken")) / "phrase.wav"
    subprocess.run(
        [binary, "-v", "en-us", "-s", "140", "-w", str(target), PHRASE], check=True, timeout=60
    )
    with wave.open(str(target)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth()) == (1, 2)
        return wav.readframes(wav.getnframes()), wav.getframerate()


def _remote(daemon: TsDaemon) -> TsClient:
    token = json.loads(
        daemon.cli("daemon", "token", "create", "--name", "remote-app", "-o", "json").stdout
    )["token"]
    return TsClient(uri=daemon.tcp_uri, subprotocols=[f"paseo.bearer.{token}"])


def test_server_info_advertises_the_voice_capabilities(daemon: TsDaemon) -> None:
    with TsClient(socket_path=daemon.socket_path) as client:
        info = client.hello("cid_caps", client_type="mobile")
    assert info["capabilities"] == {
        "voice": {
            "dictation": {"enabled": True, "reason": ""},
            "voice": {"enabled": True, "reason": ""},
        }
    }


def test_daemon_config_read_hides_secrets_and_an_invalid_set_changes_nothing(
    daemon: TsDaemon,
) -> None:
    config_file = daemon.home / "config.json"
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_config")
        got = client.request("get_daemon_config_request", "get_daemon_config_response")
        assert got["__type"] == "get_daemon_config_response"
        assert got["config"]["mcp"] == {"injectIntoAgents": True}
        # The key is set, its value is not sent anywhere in any frame.
        assert got["config"]["providers"]["claude"]["env"]["ANTHROPIC_API_KEY"] == "********"
        assert SECRET not in json.dumps(client.frames)

        before = config_file.read_bytes()
        refused = client.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={"providers": {"claude": {"additionalModels": [{"id": "m1", "label": ""}]}}},
        )
        assert refused["__type"] == "rpc_error"
        assert refused["requestType"] == "set_daemon_config_request"
        assert "additionalModels" in refused["error"]
        assert config_file.read_bytes() == before

        other = client.request(
            "set_daemon_config_request", "set_daemon_config_response", config={"log": {}}
        )
        assert other["__type"] == "rpc_error"
        assert "log" in other["error"]
        assert config_file.read_bytes() == before

        changed = client.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={
                "mcp": {"injectIntoAgents": False},
                "providers": {"claude": {"enabled": False}},
            },
        )
        assert changed["__type"] == "set_daemon_config_response"
        assert changed["config"]["mcp"] == {"injectIntoAgents": False}
        assert changed["config"]["providers"]["claude"]["enabled"] is False
        on_disk = json.loads(config_file.read_text())
        assert on_disk["agents"]["providers"]["claude"]["enabled"] is False
        # The stored secret is kept as it was.
        assert on_disk["agents"]["providers"]["claude"]["env"]["ANTHROPIC_API_KEY"] == SECRET
        assert on_disk["plugins"]["mcp"]["settings"]["injectIntoAgents"] is False

        restored = client.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={"mcp": {"injectIntoAgents": True}, "providers": {"claude": {"enabled": True}}},
        )
        assert restored["config"]["mcp"] == {"injectIntoAgents": True}


def test_a_remote_session_gets_no_local_authority(daemon: TsDaemon) -> None:
    config_file = daemon.home / "config.json"
    pid_before = json.loads((daemon.home / "paseo.pid").read_text())["pid"]
    with _remote(daemon) as remote:
        remote.hello("cid_remote_settings", client_type="mobile")
        got = remote.request("get_daemon_config_request", "get_daemon_config_response")
        assert SECRET not in json.dumps(remote.frames)
        assert got["config"]["providers"]["claude"]["env"]["ANTHROPIC_API_KEY"] == "********"

        before = config_file.read_bytes()
        refused = remote.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={"mcp": {"injectIntoAgents": False}},
        )
        assert refused["__type"] == "rpc_error"
        assert "injectIntoAgents" in refused["error"]
        assert config_file.read_bytes() == before

        # What the TypeScript daemon lets any client change, a remote session may change.
        allowed = remote.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={"providers": {"claude": {"enabled": True}}},
        )
        assert allowed["__type"] == "set_daemon_config_response"

        restart = remote.request(
            "restart_server_request", ("status", "restart_requested"), reason="remote"
        )
        assert restart["__type"] == "rpc_error"
        assert restart["requestType"] == "restart_server_request"
    assert json.loads((daemon.home / "paseo.pid").read_text())["pid"] == pid_before


def test_project_config_round_trip(daemon: TsDaemon, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    paseo_json = project / "paseo.json"
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_project_config")
        unknown = client.request(
            "read_project_config_request", "read_project_config_response", repoRoot=str(project)
        )
        assert unknown["ok"] is False
        assert unknown["error"] == {"code": "project_not_found"}

        opened = client.request("open_project_request", "open_project_response", cwd=str(project))
        assert opened["__type"] == "open_project_response"

        empty = client.request(
            "read_project_config_request", "read_project_config_response", repoRoot=str(project)
        )
        assert (empty["ok"], empty["config"], empty["revision"]) == (True, None, None)

        wanted = {"scripts": {"test": {"command": "echo ok"}}, "custom": {"kept": 1}}
        written = client.request(
            "write_project_config_request",
            "write_project_config_response",
            repoRoot=str(project),
            config=wanted,
            expectedRevision=None,
        )
        assert written["ok"] is True
        assert written["config"] == wanted
        assert json.loads(paseo_json.read_text()) == wanted
        assert written["revision"]["size"] == paseo_json.stat().st_size

        read = client.request(
            "read_project_config_request", "read_project_config_response", repoRoot=str(project)
        )
        assert (read["config"], read["revision"]) == (wanted, written["revision"])

        stale = client.request(
            "write_project_config_request",
            "write_project_config_response",
            repoRoot=str(project),
            config={"scripts": {}},
            expectedRevision=None,
        )
        assert stale["ok"] is False
        assert stale["error"] == {
            "code": "stale_project_config",
            "currentRevision": written["revision"],
        }

        invalid = client.request(
            "write_project_config_request",
            "write_project_config_response",
            repoRoot=str(project),
            config={"scripts": {"bad name!": {"command": "x"}}},
            expectedRevision=written["revision"],
        )
        assert invalid["ok"] is False
        assert invalid["error"] == {"code": "invalid_project_config"}
        assert json.loads(paseo_json.read_text()) == wanted
        assert [p.name for p in project.iterdir()] == ["paseo.json"]


def test_provider_diagnostic_reports_what_the_doctor_checks(daemon: TsDaemon) -> None:
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_diag")
        found = client.request(
            "provider_diagnostic_request", "provider_diagnostic_response", provider="claude"
        )
        assert found["__type"] == "provider_diagnostic_response"
        lines = found["diagnostic"].splitlines()
        assert lines[0] == "Claude Code"
        assert any(line.startswith("  Binary: ") for line in lines)
        assert any(line.startswith("  Status: ") for line in lines)
        assert SECRET not in found["diagnostic"]

        unknown = client.request(
            "provider_diagnostic_request", "provider_diagnostic_response", provider="nosuch"
        )
        assert unknown["__type"] == "rpc_error"
        assert unknown["code"] == "provider_diagnostic_failed"
        assert "nosuch" in unknown["error"]


def test_a_dictation_stream_of_spoken_audio_gives_its_transcript(
    daemon: TsDaemon, spoken_pcm: tuple[bytes, int]
) -> None:
    pcm, rate = spoken_pcm
    fmt = f"audio/pcm;rate={rate};bits=16"
    chunks = [pcm[i : i + CHUNK_BYTES] for i in range(0, len(pcm), CHUNK_BYTES)]
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_dictation", client_type="mobile")
        client.session({"type": "dictation_stream_start", "dictationId": "d1", "format": fmt})
        started = client.wait_for(lambda m: m["type"] == "dictation_stream_ack")
        assert started["payload"] == {"dictationId": "d1", "ackSeq": -1}
        for seq, chunk in enumerate(chunks):
            client.session(
                {
                    "type": "dictation_stream_chunk",
                    "dictationId": "d1",
                    "seq": seq,
                    "audio": base64.b64encode(chunk).decode("ascii"),
                    "format": fmt,
                }
            )
            acked = client.wait_for(
                lambda m, s=seq: m["type"] == "dictation_stream_ack" and m["payload"]["ackSeq"] == s
            )
            assert acked["payload"]["dictationId"] == "d1"
        # A chunk sent again (its ack was lost) is acknowledged, not stored twice.
        client.session(
            {
                "type": "dictation_stream_chunk",
                "dictationId": "d1",
                "seq": 0,
                "audio": base64.b64encode(chunks[0]).decode("ascii"),
                "format": fmt,
            }
        )
        again = client.wait_for(lambda m: m["type"] == "dictation_stream_ack")
        assert again["payload"]["ackSeq"] == len(chunks) - 1
        client.session(
            {"type": "dictation_stream_finish", "dictationId": "d1", "finalSeq": len(chunks) - 1}
        )
        accepted = client.wait_for(lambda m: m["type"] == "dictation_stream_finish_accepted")
        assert accepted["payload"]["dictationId"] == "d1"
        final = client.wait_for(
            lambda m: m["type"] in ("dictation_stream_final", "dictation_stream_error"),
            timeout=accepted["payload"]["timeoutMs"] / 1000,
        )
        assert final == {
            "type": "dictation_stream_final",
            "payload": {"dictationId": "d1", "text": PHRASE},
        }

        client.session(
            {
                "type": "dictation_stream_chunk",
                "dictationId": "d1",
                "seq": 0,
                "audio": "",
                "format": fmt,
            }
        )
        gone = client.wait_for(lambda m: m["type"] == "dictation_stream_error")
        assert gone["payload"]["dictationId"] == "d1"
        assert gone["payload"]["retryable"] is False


def test_voice_mode_needs_an_agent_and_abort_and_played_are_accepted(daemon: TsDaemon) -> None:
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_voice", client_type="mobile")
        refused = client.request(
            "set_voice_mode", "set_voice_mode_response", enabled=True, agentId="no-such-agent"
        )
        assert refused["__type"] == "set_voice_mode_response"
        assert (refused["accepted"], refused["enabled"], refused["agentId"]) == (
            False,
            False,
            None,
        )
        assert "no-such-agent" in refused["error"]
        off = client.request("set_voice_mode", "set_voice_mode_response", enabled=False)
        assert (off["accepted"], off["enabled"]) == (True, False)
        # Notifications with no reply: no rpc_error comes back for them.
        client.session({"type": "abort_request"})
        client.session({"type": "audio_played", "id": "speech:1"})
        pong = client.request("ping", "pong")
        assert pong["__type"] == "pong"
        assert client.messages("rpc_error") == []


def test_voice_mode_hears_spoken_audio_and_prompts_the_agent(
    daemon: TsDaemon, spoken_pcm: tuple[bytes, int], tmp_path: Path
) -> None:
    pcm, rate = spoken_pcm
    fmt = f"audio/pcm;rate={rate};bits=16"
    with daemon.client() as rpc:
        agent_id = str(
            rpc.call("agent.create", {"provider": "scripted", "cwd": str(tmp_path)})["agent"]["id"]
        )
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_voice_mode", client_type="mobile")
        on = client.request(
            "set_voice_mode", "set_voice_mode_response", enabled=True, agentId=agent_id
        )
        assert (on["accepted"], on["enabled"], on["agentId"], on["error"]) == (
            True,
            True,
            agent_id,
            None,
        )
        chunks = [pcm[i : i + CHUNK_BYTES] for i in range(0, len(pcm), CHUNK_BYTES)]
        for index, chunk in enumerate(chunks):
            client.session(
                {
                    "type": "voice_audio_chunk",
                    "audio": base64.b64encode(chunk).decode("ascii"),
                    "format": fmt,
                    "isLast": index == len(chunks) - 1,
                }
            )
        heard = client.wait_for(lambda m: m["type"] == "transcription_result", timeout=120)
        assert heard["payload"]["text"] == PHRASE
        with daemon.client() as rpc:
            waited = rpc.call("agent.wait", {"agentId": agent_id, "timeout": 60}, timeout=70)
            assert waited["outcome"] == "idle", waited
            entries = rpc.call("agent.timeline", {"agentId": agent_id, "limit": 50, "tail": True})
        prompts = [
            e["event"]["item"]["text"]
            for e in entries["entries"]
            if e["event"].get("type") == "timeline"
            and e["event"]["item"].get("type") == "user_message"
        ]
        assert prompts
        assert prompts[-1].startswith(PHRASE)
        off = client.request("set_voice_mode", "set_voice_mode_response", enabled=False)
        assert (off["accepted"], off["enabled"], off["agentId"]) == (True, False, None)
        assert client.messages("rpc_error") == []


def test_config_changes_are_pushed_as_the_typescript_daemon_pushes_them(
    daemon: TsDaemon,
) -> None:
    with (
        TsClient(socket_path=daemon.socket_path) as watcher,
        TsClient(socket_path=daemon.socket_path) as editor,
    ):
        first = watcher.hello("cid_watcher", client_type="mobile")
        assert first["capabilities"]["voice"]["dictation"]["enabled"] is True
        editor.hello("cid_editor")
        editor.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={"providers": {"claude": {"enabled": False}}},
        )
        changed = watcher.wait_for(
            lambda m: m["type"] == "status" and m["payload"]["status"] == "daemon_config_changed"
        )
        assert changed["payload"]["config"]["providers"]["claude"]["enabled"] is False
        assert SECRET not in json.dumps(watcher.frames)

        # A restart-only change (every speech setting is one) leaves the capabilities as the
        # running daemon has them: no new server_info.
        with daemon.client() as rpc:
            rpc.call("config.patch", {"patch": {"features": {"dictation": {"enabled": False}}}})
            rpc.call("config.patch", {"patch": {"features": {"dictation": {"enabled": None}}}})
        editor.request(
            "set_daemon_config_request",
            "set_daemon_config_response",
            config={"providers": {"claude": {"enabled": True}}},
        )
        watcher.wait_for(
            lambda m: (
                m["type"] == "status"
                and m["payload"]["status"] == "daemon_config_changed"
                and m["payload"]["config"]["providers"]["claude"]["enabled"] is True
            )
        )
        infos = [m for m in watcher.messages("status") if m["payload"]["status"] == "server_info"]
        assert len(infos) == 1


def test_restart_from_a_local_session_brings_the_daemon_back(daemon: TsDaemon) -> None:
    pid_file = daemon.home / "paseo.pid"
    before = json.loads(pid_file.read_text())["pid"]
    with TsClient(socket_path=daemon.socket_path) as client:
        client.hello("cid_restart")
        answer = client.request(
            "restart_server_request", ("status", "restart_requested"), reason="settings changed"
        )
        assert answer == {
            "__type": "status",
            "status": "restart_requested",
            "clientId": "cid_restart",
            "reason": "settings changed",
            "requestId": answer["requestId"],
        }

    def restarted() -> int | None:
        try:
            pid = int(json.loads(pid_file.read_text())["pid"])
        except (OSError, ValueError, KeyError):
            return None
        return pid if pid != before else None

    daemon.pid = poll(restarted, timeout=90, what="the restarted daemon's pid file")

    def answers() -> bool:
        try:
            with TsClient(socket_path=daemon.socket_path) as client:
                return bool(client.hello("cid_after_restart")["serverId"])
        except OSError:
            return False

    assert poll(answers, timeout=60, what="the restarted daemon to answer")
