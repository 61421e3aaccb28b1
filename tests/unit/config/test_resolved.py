"""Effective values: defaults, then the file, then the launch environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paseo.config import PaseoConfig, ResolvedConfig, load_config, resolve

HOME = Path("/srv/paseo-home")


def resolved(
    data: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> ResolvedConfig:
    return resolve(PaseoConfig.model_validate(data or {}), env or {}, home=HOME)


def test_defaults() -> None:
    config = resolved()
    daemon = config.daemon
    assert daemon.listen == "127.0.0.1:6767"
    assert daemon.hostnames == ()
    assert daemon.trustedProxies == ("loopback",)
    assert (daemon.git.maxProcessesPerSecond, daemon.git.maxProcessConcurrency) == (64, 8)
    assert daemon.appendSystemPrompt == ""
    # Absent: the installed providers offer theirs (the kernel names no agent program).
    assert daemon.terminalProfiles is None
    assert daemon.agentProfiles == ()
    assert daemon.cors.allowedOrigins == ()
    assert daemon.relay.enabled is False
    assert daemon.relay.endpoint == daemon.relay.publicEndpoint == "relay.paseo.sh:443"
    assert daemon.relay.useTls is daemon.relay.publicUseTls is True
    assert daemon.auth.password is None
    assert not daemon.auth.required
    assert config.app.baseUrl == "https://app.paseo.sh"
    assert config.worktrees.root == str(HOME / "worktrees")
    assert config.providers.local.modelsDir == str(HOME / "models" / "local-speech")
    assert config.agents.skills.selection.mode == "all"
    assert config.agents.providers == {}
    assert config.agents.metadataGeneration.providers == ()
    assert config.pluginsEnabled is True
    assert config.plugins == {}
    assert config.features.dictation.enabled is True
    assert config.features.dictation.stt.provider == "local"
    assert config.features.voiceMode.tts.provider == "local"
    assert config.features.voiceMode.turnDetection.provider == "local"
    assert (config.log.level, config.log.format) == ("info", "pretty")
    assert config.log.file.path == str(HOME / "daemon.log")
    assert (config.log.file.rotate.maxSize, config.log.file.rotate.maxFiles) == ("10m", 2)
    assert config.storage.driver == "json"
    assert config.envOverrides == {}


def test_absent_terminal_profiles_are_the_defaults_but_empty_means_none() -> None:
    assert resolved({"daemon": {}}).daemon.terminalProfiles is None
    assert resolved({"daemon": {"terminalProfiles": []}}).daemon.terminalProfiles == ()
    assert resolved({"daemon": {"agentProfiles": []}}).daemon.agentProfiles == ()


def test_file_values_win_over_defaults() -> None:
    config = resolved(
        {
            "daemon": {
                "listen": "0.0.0.0:1",
                "trustedProxies": True,
                "relay": {"endpoint": "self.hosted:80"},
            },
            "worktrees": {"root": "trees"},
            "log": {"level": "debug", "file": {"path": "/var/log/p.log"}},
        }
    )
    assert config.daemon.listen == "0.0.0.0:1"
    assert config.daemon.trustedProxies is True
    assert config.daemon.relay.publicEndpoint == "self.hosted:80"
    # Only the hosted relay defaults to TLS.
    assert config.daemon.relay.useTls is False
    assert config.worktrees.root == str(HOME / "trees")
    assert config.log.console.level == config.log.file.level == "debug"
    assert config.log.file.path == "/var/log/p.log"


def test_environment_overrides_the_file_and_is_recorded() -> None:
    config = resolved(
        {
            "daemon": {"listen": "a:1", "git": {"maxProcessesPerSecond": 10}},
            "log": {"level": "warn", "format": "pretty"},
            "storage": {"driver": "sqlite"},
        },
        {
            "PASEO_LISTEN": "0.0.0.0:9",
            "PASEO_GIT_MAX_PROCESSES_PER_SECOND": "20",
            "PASEO_LOG_LEVEL": "DEBUG",
            "PASEO_LOG_FORMAT": "json",
            "PASEO_LOG_FILE_PATH": "elsewhere.log",
            "PASEO_STORAGE_DRIVER": "json",
            "PASEO_PASSWORD": "hunter2",
            "PASEO_APP_BASE_URL": "https://app.local",
        },
    )
    assert config.daemon.listen == "0.0.0.0:9"
    assert config.daemon.git.maxProcessesPerSecond == 20
    assert config.log.level == "debug"
    assert config.log.format == "json"
    assert config.log.file.path == str(HOME / "elsewhere.log")
    assert config.storage.driver == "json"
    assert config.app.baseUrl == "https://app.local"
    assert config.daemon.auth.envPassword == "hunter2"
    assert config.daemon.auth.required
    assert config.envOverrides == {
        "app.baseUrl": "PASEO_APP_BASE_URL",
        "daemon.auth.password": "PASEO_PASSWORD",
        "daemon.git.maxProcessesPerSecond": "PASEO_GIT_MAX_PROCESSES_PER_SECOND",
        "daemon.listen": "PASEO_LISTEN",
        "log.file.path": "PASEO_LOG_FILE_PATH",
        "log.format": "PASEO_LOG_FORMAT",
        "log.level": "PASEO_LOG_LEVEL",
        "storage.driver": "PASEO_STORAGE_DRIVER",
    }


def test_plain_password_is_never_dumped() -> None:
    config = resolved({}, {"PASEO_PASSWORD": "hunter2"})
    assert "hunter2" not in json.dumps(config.to_json())
    assert "hunter2" not in repr(config)


@pytest.mark.parametrize(
    ("env", "expected", "source"),
    [
        ({"PASEO_GIT_CONCURRENCY": "3"}, 3, "PASEO_GIT_CONCURRENCY"),
        (
            {"PASEO_GIT_CONCURRENCY": "3", "PASEO_GIT_MAX_PROCESS_CONCURRENCY": "5"},
            5,
            "PASEO_GIT_MAX_PROCESS_CONCURRENCY",
        ),
        # An invalid new name falls through to the legacy alias, then to the file.
        (
            {"PASEO_GIT_MAX_PROCESS_CONCURRENCY": "lots", "PASEO_GIT_CONCURRENCY": "3"},
            3,
            "PASEO_GIT_CONCURRENCY",
        ),
        ({"PASEO_GIT_MAX_PROCESS_CONCURRENCY": "0"}, 2, None),
        ({"PASEO_GIT_MAX_PROCESS_CONCURRENCY": "-4"}, 2, None),
        ({"PASEO_GIT_MAX_PROCESS_CONCURRENCY": "2.5"}, 2, None),
        ({"PASEO_GIT_MAX_PROCESS_CONCURRENCY": ""}, 2, None),
        ({"PASEO_GIT_MAX_PROCESS_CONCURRENCY": " 6 "}, 6, "PASEO_GIT_MAX_PROCESS_CONCURRENCY"),
    ],
)
def test_git_concurrency_precedence(env: dict[str, str], expected: int, source: str | None) -> None:
    config = resolved({"daemon": {"git": {"maxProcessConcurrency": 2}}}, env)
    assert config.daemon.git.maxProcessConcurrency == expected
    assert config.envOverrides.get("daemon.git.maxProcessConcurrency") == source


def test_hostnames_from_the_environment_add_to_the_file() -> None:
    config = resolved({"daemon": {"hostnames": ["a", "b"]}}, {"PASEO_HOSTNAMES": "b, c,"})
    assert config.daemon.hostnames == ("a", "b", "c")
    assert resolved({}, {"PASEO_ALLOWED_HOSTS": "x"}).daemon.hostnames == ("x",)
    assert (
        resolved({"daemon": {"hostnames": ["a"]}}, {"PASEO_HOSTNAMES": "true"}).daemon.hostnames
        is True
    )
    assert (
        resolved({"daemon": {"hostnames": True}}, {"PASEO_HOSTNAMES": "x"}).daemon.hostnames is True
    )


def test_cors_origins_from_the_environment_add_to_the_file() -> None:
    config = resolved(
        {"daemon": {"cors": {"allowedOrigins": ["https://a"]}}},
        {"PASEO_CORS_ORIGINS": "https://b,https://a"},
    )
    assert config.daemon.cors.allowedOrigins == ("https://a", "https://b")
    assert config.envOverrides["daemon.cors.allowedOrigins"] == "PASEO_CORS_ORIGINS"


def test_trusted_proxies_environment() -> None:
    assert resolved({}, {"PASEO_TRUSTED_PROXIES": "off"}).daemon.trustedProxies == ()
    assert resolved({}, {"PASEO_TRUSTED_PROXIES": "yes"}).daemon.trustedProxies is True
    assert resolved(
        {}, {"PASEO_TRUSTED_PROXIES": "10.0.0.0/8, loopback"}
    ).daemon.trustedProxies == (
        "10.0.0.0/8",
        "loopback",
    )


def test_port_only_changes_the_default_listen_address() -> None:
    assert resolved({}, {"PORT": "7000"}).daemon.listen == "127.0.0.1:7000"
    assert resolved({"daemon": {"listen": "a:1"}}, {"PORT": "7000"}).daemon.listen == "a:1"
    assert resolved({}, {"PORT": "99999"}).daemon.listen == "127.0.0.1:6767"


def test_relay_environment() -> None:
    config = resolved(
        {"daemon": {"relay": {"enabled": True}}},
        {
            "PASEO_RELAY_ENABLED": "0",
            "PASEO_RELAY_ENDPOINT": "mine:80",
            "PASEO_RELAY_USE_TLS": "maybe",  # invalid: ignored
        },
    )
    assert config.daemon.relay.enabled is False
    assert config.daemon.relay.endpoint == config.daemon.relay.publicEndpoint == "mine:80"
    assert config.daemon.relay.useTls is False
    assert "daemon.relay.useTls" not in config.envOverrides


def test_log_levels_specific_beats_global_and_environment_beats_file() -> None:
    data = {"log": {"level": "warn", "console": {"level": "error"}, "file": {"level": "trace"}}}
    config = resolved(data)
    assert (config.log.console.level, config.log.file.level) == ("error", "trace")
    config = resolved(data, {"PASEO_LOG": "debug"})
    assert (config.log.level, config.log.console.level, config.log.file.level) == (
        "debug",
        "debug",
        "debug",
    )
    config = resolved(data, {"PASEO_LOG_LEVEL": "nonsense", "PASEO_LOG_FILE_LEVEL": "info"})
    assert (config.log.level, config.log.file.level) == ("warn", "info")
    config = resolved(
        data, {"PASEO_LOG_FILE_ROTATE_COUNT": "x", "PASEO_LOG_FILE_ROTATE_SIZE": "1m"}
    )
    assert (config.log.file.rotate.maxFiles, config.log.file.rotate.maxSize) == (2, "1m")


def test_speech_environment() -> None:
    data = {
        "features": {
            "dictation": {
                "enabled": True,
                "stt": {"provider": "openai", "apiKey": "k", "language": "en"},
            },
        }
    }
    config = resolved(
        data,
        {
            "PASEO_DICTATION_ENABLED": "false",
            "PASEO_DICTATION_STT_PROVIDER": "LOCAL",
            "PASEO_DICTATION_LANGUAGE": "fr",
            "PASEO_VOICE_TTS_PROVIDER": "openai",
            "PASEO_LOCAL_MODELS_DIR": "/models",
            "PASEO_VOICE_LLM_PROVIDER": "codex",
        },
    )
    dictation = config.features.dictation
    assert dictation.enabled is False
    # Switching provider starts a fresh site: the OpenAI key does not follow.
    assert dictation.stt.model_dump(exclude_none=True) == {"provider": "local", "language": "fr"}
    # Voice mode falls back to the dictation language.
    assert config.features.voiceMode.stt.language == "fr"
    assert config.features.voiceMode.tts.provider == "openai"
    assert config.features.voiceMode.llm.provider == "codex"
    assert config.providers.local.modelsDir == "/models"
    assert config.envOverrides["features.voiceMode.stt.language"] == "PASEO_DICTATION_LANGUAGE"


def test_resolved_config_is_frozen() -> None:
    config = resolved()
    with pytest.raises(ValueError, match="frozen"):
        config.daemon.listen = "x"  # type: ignore[misc]


def test_loaded_config_helpers(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "pluginsEnabled": True,
                "plugins": {"acme": {"enabled": False, "settings": {"a": 1}}},
                "log": {"file": {"rotate": {"maxSize": "512k", "maxFiles": 3}}},
                "storage": {"driver": "sqlite"},
            }
        )
    )
    loaded = load_config(path, {})
    assert loaded.plugins_enabled is True
    assert loaded.plugin_entries == {"acme": {"enabled": False, "settings": {"a": 1}}}
    assert loaded.store_driver == "sqlite"
    settings = loaded.logging(foreground=False)
    assert settings["file_path"] == tmp_path / "daemon.log"
    assert (settings["max_bytes"], settings["backups"]) == (512 * 1024, 3)
    assert settings["console_level"] is None
    assert loaded.logging(foreground=True)["console_level"] == "info"


def test_environment_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASEO_LISTEN", "1.2.3.4:5")
    assert resolve(PaseoConfig(), home=HOME).daemon.listen == "1.2.3.4:5"


@pytest.mark.parametrize("which", ["empty", "full", "env"])
def test_the_constructed_view_is_what_validation_would_build(
    which: str, full_config: dict[str, Any]
) -> None:
    """resolve() builds its models without validating them: each value must already have the
    declared type (tuples, nested models), or validation would change it."""
    data = full_config if which == "full" else {}
    env = (
        {
            "PASEO_LISTEN": "0.0.0.0:7000",
            "PASEO_HOSTNAMES": "a.example, b.example",
            "PASEO_CORS_ORIGINS": "https://x.example",
            "PASEO_DICTATION_STT_PROVIDER": "openai",
        }
        if which == "env"
        else {}
    )
    view = resolved(data, env)
    revalidated = ResolvedConfig.model_validate(view.model_dump(by_alias=True))
    assert revalidated.model_dump() == view.model_dump()  # python mode: tuple vs list counts
    assert revalidated == view


def test_a_missing_file_loads_like_an_empty_one(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    missing = load_config(tmp_path / "config.json", env={}, home=HOME)
    empty = load_config(tmp_path / "empty" / "config.json", env={}, home=HOME)
    assert missing.config == PaseoConfig.model_validate({})
    assert missing.resolved.to_json() == empty.resolved.to_json()
