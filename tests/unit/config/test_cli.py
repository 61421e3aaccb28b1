"""``paseo config get|set|validate`` through the real command (``python -m paseo``)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.plugin_sources import write_tree

from tests.conftest import RunPaseo

from .conftest import FULL_CONFIG


def test_get_on_a_missing_home_creates_nothing(
    run_paseo: RunPaseo, paseo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PASEO_LISTEN")  # the suite's port-0 override would show as effective
    result = run_paseo("config", "get", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {}
    result = run_paseo("config", "get", "--effective", "daemon.listen")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "127.0.0.1:6767\n"
    result = run_paseo("config", "validate")
    assert result.returncode == 0, result.stderr
    assert "defaults apply" in result.stdout
    assert not paseo_home.exists()


def test_set_then_get(run_paseo: RunPaseo, paseo_home: Path) -> None:
    result = run_paseo("config", "set", "daemon.git.maxProcessConcurrency", "4", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"path": "daemon.git.maxProcessConcurrency", "value": 4}
    assert stat.S_IMODE(paseo_home.stat().st_mode) == 0o700
    config_file = paseo_home / "config.json"
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    assert json.loads(config_file.read_text()) == {"daemon": {"git": {"maxProcessConcurrency": 4}}}

    result = run_paseo("config", "get", "daemon.git.maxProcessConcurrency")
    assert (result.returncode, result.stdout) == (0, "4\n")
    result = run_paseo("--json", "config", "get", "daemon")
    assert json.loads(result.stdout) == {"git": {"maxProcessConcurrency": 4}}
    result = run_paseo("config", "get", "-o", "yaml", "daemon.git")
    assert result.stdout == "maxProcessConcurrency: 4\n"
    # The table view lists one leaf per line.
    result = run_paseo("config", "get")
    assert result.stdout.splitlines() == [
        "PATH                              VALUE",
        "daemon.git.maxProcessConcurrency  4",
    ]


def test_get_effective_applies_defaults_and_environment(
    run_paseo: RunPaseo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PASEO_LISTEN")  # only the variables this test sets
    run_paseo("config", "set", "daemon.git.maxProcessConcurrency", "4", check=True)
    result = run_paseo(
        "config",
        "get",
        "--effective",
        "-o",
        "json",
        env={"PASEO_GIT_MAX_PROCESSES_PER_SECOND": "12", "PASEO_PASSWORD": "hunter2"},
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["daemon"]["git"] == {"maxProcessesPerSecond": 12, "maxProcessConcurrency": 4}
    assert data["envOverrides"] == {
        "daemon.auth.password": "PASEO_PASSWORD",
        "daemon.git.maxProcessesPerSecond": "PASEO_GIT_MAX_PROCESSES_PER_SECOND",
    }
    assert "hunter2" not in result.stdout
    # Effective values are never written back.
    result = run_paseo("config", "get", "-o", "json")
    assert json.loads(result.stdout) == {"daemon": {"git": {"maxProcessConcurrency": 4}}}


def test_get_an_unset_path_fails(run_paseo: RunPaseo) -> None:
    result = run_paseo("config", "get", "daemon.listen")
    assert result.returncode == 1
    assert "daemon.listen: not set" in result.stderr


def test_set_string_and_dotted_keys(run_paseo: RunPaseo, paseo_home: Path) -> None:
    run_paseo("config", "set", "daemon.listen", "0.0.0.0:7000", check=True)
    run_paseo("config", "set", 'plugins["acme.tools"].enabled', "false", check=True)
    run_paseo("config", "set", "--string", "daemon.appendSystemPrompt", "42", check=True)
    assert json.loads((paseo_home / "config.json").read_text()) == {
        "daemon": {"listen": "0.0.0.0:7000", "appendSystemPrompt": "42"},
        "plugins": {"acme.tools": {"enabled": False}},
    }
    run_paseo("config", "set", "daemon.listen", "null", check=True)
    assert "listen" not in json.loads((paseo_home / "config.json").read_text())["daemon"]


def test_set_refuses_unknown_and_invalid_values(run_paseo: RunPaseo, paseo_home: Path) -> None:
    result = run_paseo("config", "set", "daemon.lisen", "x")
    assert result.returncode == 1
    assert result.stderr == (
        f"paseo: error: {paseo_home / 'config.json'}: daemon.lisen: unknown key\n"
    )
    result = run_paseo("config", "set", "daemon.git.maxProcessConcurrency", "0")
    assert result.returncode == 1
    assert "daemon.git.maxProcessConcurrency" in result.stderr
    assert not (paseo_home / "config.json").exists()


def test_legacy_warnings_go_to_stderr_without_values(run_paseo: RunPaseo, paseo_home: Path) -> None:
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(
        json.dumps(
            {"providers": {"openai": {"apiKey": "sk-secret"}}, "daemon": {"allowedHosts": ["h"]}}
        )
    )
    result = run_paseo("config", "get", "daemon.hostnames", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["h"]
    assert "daemon.allowedHosts: migrated to daemon.hostnames" in result.stderr
    assert "providers.openai.apiKey" in result.stderr
    assert "sk-secret" not in result.stderr


def test_validate(run_paseo: RunPaseo, paseo_home: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(FULL_CONFIG))
    result = run_paseo("config", "validate", str(good), "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "file": str(good),
        "exists": True,
        "valid": True,
        "problems": [],
    }

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"daemon": {"git": {"maxProcessConcurrency": 0}}, "future": {}}))
    result = run_paseo("config", "validate", str(bad), "-o", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert {(p["path"], p["severity"]) for p in report["problems"]} == {
        ("daemon.git.maxProcessConcurrency", "error"),
        ("future", "warning"),
    }
    result = run_paseo("config", "validate", str(bad))
    assert result.returncode == 1
    assert "daemon.git.maxProcessConcurrency" in result.stdout
    assert result.stdout.rstrip().endswith(f"{bad}: 1 error(s)")

    result = run_paseo("config", "validate", str(tmp_path / "missing.json"))
    assert result.returncode == 1
    assert "no such file" in result.stderr
    assert not paseo_home.exists()


def test_invalid_file_makes_get_fail_with_the_json_path(
    run_paseo: RunPaseo, paseo_home: Path
) -> None:
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text('{"daemon": {"hostnames": 5}}')
    result = run_paseo("config", "get", "--effective")
    assert result.returncode == 1
    assert f"{paseo_home / 'config.json'}: daemon.hostnames: " in result.stderr


def test_home_option(run_paseo: RunPaseo, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    run_paseo("--home", str(other), "config", "set", "app.baseUrl", "https://x", check=True)
    result = run_paseo("config", "get", "app.baseUrl", "--home", str(other))
    assert (result.returncode, result.stdout) == (0, "https://x\n")


def test_usage_errors(run_paseo: RunPaseo) -> None:
    assert run_paseo("config").returncode == 2
    assert run_paseo("config", "set", "daemon.listen").returncode == 2
    assert run_paseo("config", "get", "daemon..listen").returncode == 2


def test_showing_the_file_does_not_import_pydantic(paseo_home: Path) -> None:
    code = (
        "import sys\n"
        "from paseo.cli import main\n"
        "main(['config', 'get', '-q'])\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_validate_warns_about_extends_of_no_installed_provider(
    run_paseo: RunPaseo, tmp_path: Path
) -> None:
    file = tmp_path / "config.json"
    zai = {"extends": "gemini", "label": "Z"}
    file.write_text(json.dumps({"agents": {"providers": {"zai": zai}}}))
    result = run_paseo("config", "validate", str(file), "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is True
    (problem,) = report["problems"]
    assert (problem["path"], problem["severity"]) == ("agents.providers.zai.extends", "warning")
    assert 'unknown provider "gemini"' in problem["message"]
    # The message names what is installed: the built-in providers at least.
    assert all(builtin in problem["message"] for builtin in ("acp", "claude", "codex"))


def test_get_effective_shows_the_providers_terminal_profiles_when_none_are_set(
    run_paseo: RunPaseo, paseo_home: Path, tmp_path: Path
) -> None:
    plugin = tmp_path / "term-plugin"
    write_tree(
        plugin,
        {
            "pyproject.toml": '[project]\nname = "term"\nversion = "1"\n\n'
            '[project.entry-points.paseo]\nterm = "term_plugin"\n',
            "term_plugin.py": textwrap.dedent(
                """\
                from paseo_hookspecs import hookimpl
                from paseo_hookspecs.terminals import PROMPT_SENTINEL, TerminalProfile


                class Provider:
                    id = "term"
                    label = "Term"

                    def terminal_profile(self):
                        return TerminalProfile(
                            id="term", name="Term", command="term", args=[PROMPT_SENTINEL]
                        )


                @hookimpl
                def paseo_register_providers(register):
                    register(Provider())
                """
            ),
        },
    )
    entry = json.dumps({"source": "directory", "path": str(plugin)})
    run_paseo("config", "set", "plugins.term", entry, check=True)
    result = run_paseo("config", "get", "--effective", "daemon.terminalProfiles", "-o", "json")
    assert result.returncode == 0, result.stderr
    expected = {"id": "term", "name": "Term", "command": "term", "args": ["{{{prompt}}}"]}
    assert {**expected, "icon": None} in json.loads(result.stdout)

    run_paseo("config", "set", "daemon.terminalProfiles", "[]", check=True)
    result = run_paseo("config", "get", "--effective", "daemon.terminalProfiles", "-o", "json")
    assert json.loads(result.stdout) == []


def test_secrets_are_never_printed_without_show_secrets(
    run_paseo: RunPaseo, paseo_home: Path
) -> None:
    """Every secret field (a speech site's apiKey, a provider's credential variables, the
    password hash) is shown as the daemon's config.get shows it, in every output format."""
    site = json.dumps({"provider": "openai", "apiKey": "sk-stt-XyZzY"})
    result = run_paseo("config", "set", "features.dictation.stt", site, "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["value"] == {"provider": "openai", "hasApiKey": True}
    tts = json.dumps({"provider": "openai", "apiKey": "sk-tts-XyZzY"})
    run_paseo("config", "set", "features.voiceMode.tts", tts, check=True)
    env = json.dumps({"ANTHROPIC_API_KEY": "sk-ant-XyZzY", "GH_TOKEN": "ghp-XyZzY", "X": "y"})
    result = run_paseo("config", "set", "agents.providers.claude.env", env)
    assert result.returncode == 0, result.stderr
    assert "XyZzY" not in result.stdout
    hashed = "$2b$12$" + "a" * 53
    result = run_paseo("config", "set", "daemon.auth.password", hashed)
    assert result.returncode == 0, result.stderr
    assert hashed not in result.stdout

    outputs = [
        run_paseo("config", "get", *options, check=True).stdout
        for options in (
            (),
            ("-o", "json"),
            ("-o", "yaml"),
            ("--effective", "-o", "json"),
            ("--effective",),
            ("features.dictation.stt.apiKey",),
            ("agents.providers.claude.env", "-o", "json"),
        )
    ]
    for output in outputs:
        assert "XyZzY" not in output, output
        assert hashed not in output, output
    assert json.loads(outputs[1])["agents"]["providers"]["claude"]["env"] == {
        "ANTHROPIC_API_KEY": "********",
        "GH_TOKEN": "********",
        "X": "y",
    }
    assert json.loads(outputs[1])["features"]["voiceMode"]["tts"]["hasApiKey"] is True
    assert json.loads(outputs[3])["features"]["dictation"]["stt"]["hasApiKey"] is True
    assert outputs[5] == "********\n"

    # The owner asks explicitly.
    shown = run_paseo("config", "get", "--show-secrets", "features.dictation.stt.apiKey")
    assert (shown.returncode, shown.stdout) == (0, "sk-stt-XyZzY\n")
    shown = run_paseo("config", "get", "--show-secrets", "-o", "json", check=True)
    assert json.loads(shown.stdout)["daemon"]["auth"]["password"] == hashed
    # And the file still holds the keys: hiding them is a matter of display only.
    stored = json.loads((paseo_home / "config.json").read_text())
    assert stored["features"]["voiceMode"]["tts"]["apiKey"] == "sk-tts-XyZzY"


def test_the_cli_log_masks_a_secret_value_on_the_command_line() -> None:
    from paseo.cli.app import _loggable

    assert _loggable(["config", "set", "features.dictation.stt.apiKey", "sk-1", "-o", "json"]) == [
        "config",
        "set",
        "features.dictation.stt.apiKey",
        "********",
        "-o",
        "json",
    ]
    assert _loggable(["x", "--password=hunter2", "y"]) == ["x", "--password=********", "y"]


def test_set_works_in_a_file_with_unknown_keys_and_keeps_them(
    run_paseo: RunPaseo, paseo_home: Path
) -> None:
    paseo_home.mkdir()
    config_file = paseo_home / "config.json"
    config_file.write_text(json.dumps({"fromTypeScriptPaseo": {"x": 1}}))
    result = run_paseo("config", "validate")
    assert result.returncode == 0, result.stdout
    assert "fromTypeScriptPaseo" in result.stdout
    result = run_paseo("config", "set", "app.baseUrl", "https://x")
    assert result.returncode == 0, result.stderr
    assert "fromTypeScriptPaseo: unknown key ignored" in result.stderr
    assert json.loads(config_file.read_text()) == {
        "fromTypeScriptPaseo": {"x": 1},
        "app": {"baseUrl": "https://x"},
    }


def test_a_listen_address_start_up_cannot_use_is_refused_and_reported(
    run_paseo: RunPaseo, paseo_home: Path
) -> None:
    """Issue 27, item 7: `config set daemon.listen garbage` was accepted, `config validate`
    called it valid, and `daemon start` failed."""
    result = run_paseo("config", "set", "daemon.listen", "garbage")
    assert result.returncode == 1
    assert "daemon.listen: expected host:port, a port" in result.stderr
    assert not (paseo_home / "config.json").exists()
    for good in ("127.0.0.1:7001", "0.0.0.0:7002", "unix:///tmp/paseo-test.sock"):
        run_paseo("config", "set", "daemon.listen", good, check=True)
    (paseo_home / "config.json").write_text(json.dumps({"daemon": {"listen": "127.0.0.1:99999"}}))
    result = run_paseo("config", "validate")
    assert result.returncode == 1
    assert "daemon.listen" in result.stdout
    assert "port out of range" in result.stdout
    # Start-up refuses it with the same words, before it binds anything.
    started = run_paseo("daemon", "start", env={"PASEO_LISTEN": ""})
    assert started.returncode != 0
    assert "daemon.listen: port out of range" in started.stderr
