"""Loading, validating and changing config.json on disk."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from paseo.config import (
    ConfigError,
    get_path,
    load_config,
    patch,
    patch_file,
    set_path,
    validate_file,
)

from .conftest import FULL_CONFIG


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return tmp_path / "config.json"


def test_missing_file_means_defaults(config_file: Path) -> None:
    loaded = load_config(config_file, {})
    assert not loaded.exists
    assert loaded.document == {}
    assert loaded.config.to_json() == {}
    assert loaded.resolved.daemon.listen == "127.0.0.1:6767"
    assert not config_file.exists()


def test_full_file_loads(config_file: Path) -> None:
    write(config_file, FULL_CONFIG)
    loaded = load_config(config_file, {})
    assert loaded.warnings == ()
    assert loaded.config.to_json() == FULL_CONFIG
    assert loaded.document == FULL_CONFIG


def test_invalid_json_names_the_file(config_file: Path) -> None:
    write(config_file, '{"daemon": {')
    with pytest.raises(ConfigError) as caught:
        load_config(config_file, {})
    assert str(config_file) in caught.value.message
    assert "invalid JSON at line 1" in caught.value.message


def test_non_object_root_is_an_error(config_file: Path) -> None:
    write(config_file, [1, 2])
    with pytest.raises(ConfigError, match="expected a JSON object"):
        load_config(config_file, {})


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        (
            {"daemon": {"git": {"maxProcessConcurrency": -1}}},
            "daemon.git.maxProcessConcurrency",
            "greater than 0",
        ),
        ({"daemon": {"hostnames": 7}}, "daemon.hostnames", "true or a list of strings"),
        (
            {"daemon": {"terminalProfiles": [{"id": "a", "name": "A", "command": 1}]}},
            "daemon.terminalProfiles[0].command",
            "valid string",
        ),
        (
            {"daemon": {"terminalProfiles": [{"id": "a", "name": "A"}]}},
            "daemon.terminalProfiles[0].command",
            "required",
        ),
        (
            {"features": {"voiceMode": {"tts": {"provider": "openai", "speed": "fast"}}}},
            "features.voiceMode.tts.speed",
            "valid number",
        ),
        (
            {"agents": {"providers": {"zai": {"extends": "claude"}}}},
            "agents.providers.zai.label",
            "must declare label",
        ),
        (
            {"agents": {"providers": {"Bad": {}}}},
            "agents.providers.Bad",
            "invalid key",
        ),
        (
            {"plugins": {"acme.tools": {"enabled": "yes"}}},
            'plugins["acme.tools"].enabled',
            "valid boolean",
        ),
        (
            {"daemon": {"agentProfiles": [{"id": "a", "name": "A"}]}},
            "daemon.agentProfiles[0].provider",
            "required",
        ),
        (
            {
                "daemon": {
                    "agentProfiles": [
                        {"id": "a", "name": "Review", "provider": "claude"},
                        {"id": "b", "name": "Review", "provider": "codex"},
                    ]
                }
            },
            "daemon.agentProfiles[1].name",
            "'Review' is already used by daemon.agentProfiles[0]",
        ),
        (
            {"daemon": {"agentProfiles": [{"id": "a", "name": "A", "provider": "c", "labels": 1}]}},
            "daemon.agentProfiles[0].labels",
            "valid dictionary",
        ),
        (
            {
                "daemon": {
                    "agentProfiles": [{"id": "a", "name": "A", "provider": "c", "budget": {}}]
                }
            },
            "daemon.agentProfiles[0].budget",
            "a budget needs tokens or usd",
        ),
        (
            {
                "daemon": {
                    "agentProfiles": [
                        {"id": "a", "name": "A", "provider": "c", "budget": {"tokens": 0}}
                    ]
                }
            },
            "daemon.agentProfiles[0].budget.tokens",
            "greater than 0",
        ),
        (
            {"worktrees": {"servicePorts": {"range": "9-1"}}},
            "worktrees.servicePorts.range",
            "range",
        ),
    ],
)
def test_schema_errors_name_the_file_and_json_path(
    config_file: Path, data: dict[str, Any], path: str, fragment: str
) -> None:
    write(config_file, data)
    with pytest.raises(ConfigError) as caught:
        load_config(config_file, {})
    message = caught.value.message
    assert message.startswith(f"{config_file}: {path}: "), message
    assert fragment in message
    assert [p.path for p in caught.value.problems if p.severity == "error"] == [path]


def test_a_failed_parse_never_rewrites_the_file(config_file: Path) -> None:
    write(config_file, {"daemon": {"git": {"maxProcessConcurrency": 0}}, "legacy": 1})
    before = config_file.read_bytes()
    with pytest.raises(ConfigError):
        load_config(config_file, {})
    assert config_file.read_bytes() == before


def test_unknown_keys_are_dropped_on_load_with_a_warning(config_file: Path) -> None:
    write(
        config_file,
        {
            "daemon": {"listen": "x:1", "browserTools": {"enabled": True}},
            "futureSection": {"a": 1},
            "features": {"dictation": {"stt": {"provider": "local", "engine": "v2"}}},
        },
    )
    before = config_file.read_bytes()
    loaded = load_config(config_file, {})
    assert loaded.document == {
        "daemon": {"listen": "x:1"},
        "features": {"dictation": {"stt": {"provider": "local"}}},
    }
    assert {w.path for w in loaded.warnings} == {
        "daemon.browserTools",
        "futureSection",
        "features.dictation.stt.engine",
    }
    assert all(w.severity == "warning" for w in loaded.warnings)
    assert config_file.read_bytes() == before


def test_legacy_shapes_load_with_warnings(config_file: Path) -> None:
    write(config_file, {"daemon": {"allowedHosts": ["h"]}})
    loaded = load_config(config_file, {})
    assert loaded.config.daemon is not None
    assert loaded.config.daemon.hostnames == ["h"]
    assert [w.path for w in loaded.warnings] == ["daemon.allowedHosts"]


# --- set ------------------------------------------------------------------------------------


def test_set_persists_only_what_was_asked(config_file: Path) -> None:
    env = {"PASEO_LISTEN": "0.0.0.0:1", "PASEO_GIT_MAX_PROCESS_CONCURRENCY": "3"}
    os.environ.update(env)  # must not leak into the file either
    try:
        set_path(config_file, "daemon.git.maxProcessesPerSecond", "16")
    finally:
        for name in env:
            del os.environ[name]
    assert json.loads(config_file.read_text()) == {"daemon": {"git": {"maxProcessesPerSecond": 16}}}
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600


def test_set_keeps_everything_else_byte_for_value(config_file: Path) -> None:
    write(config_file, FULL_CONFIG)
    set_path(config_file, "daemon.listen", "127.0.0.1:9999")
    expected = json.loads(json.dumps(FULL_CONFIG))
    expected["daemon"]["listen"] = "127.0.0.1:9999"
    assert json.loads(config_file.read_text()) == expected


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("8", 8),
        ("true", True),
        ('["a", "b"]', ["a", "b"]),
        ("0.0.0.0:6767", "0.0.0.0:6767"),
        ('"quoted"', "quoted"),
    ],
)
def test_set_parses_json_else_takes_a_string(value: str, stored: Any) -> None:
    from paseo.config import parse_value

    assert parse_value(value) == stored


def test_set_literal_string(config_file: Path) -> None:
    set_path(config_file, "daemon.appendSystemPrompt", "true", literal=True)
    assert json.loads(config_file.read_text()) == {"daemon": {"appendSystemPrompt": "true"}}


def test_set_null_removes_the_key_and_empty_parents(config_file: Path) -> None:
    write(config_file, {"daemon": {"git": {"maxProcessConcurrency": 2}}, "app": {"baseUrl": "u"}})
    set_path(config_file, "daemon.git.maxProcessConcurrency", "null")
    assert json.loads(config_file.read_text()) == {"app": {"baseUrl": "u"}}


def test_set_refuses_unknown_keys_and_writes_nothing(config_file: Path) -> None:
    write(config_file, {"daemon": {"listen": "a:1"}})
    before = config_file.read_bytes()
    with pytest.raises(ConfigError) as caught:
        set_path(config_file, "daemon.listn", "b:2")
    assert caught.value.message == f"{config_file}: daemon.listn: unknown key"
    assert config_file.read_bytes() == before


def test_set_keeps_the_unknown_keys_of_the_file_and_patches_around_them(
    config_file: Path,
) -> None:
    # A home touched by a newer or the TypeScript Paseo stays patchable (issue 27, item 5).
    write(config_file, {"futureSection": {"a": 1}, "daemon": {"futureKey": True}})
    result = set_path(config_file, "daemon.listen", "b:2")
    assert json.loads(config_file.read_text()) == {
        "futureSection": {"a": 1},
        "daemon": {"futureKey": True, "listen": "b:2"},
    }
    assert {w.path for w in result.warnings} == {"futureSection", "daemon.futureKey"}
    # Changing or adding an unknown key is still refused, and writes nothing.
    before = config_file.read_bytes()
    with pytest.raises(ConfigError, match="futureSection: unknown key"):
        set_path(config_file, "futureSection.a", "2")
    with pytest.raises(ConfigError, match=r"daemon\.otherKey: unknown key"):
        set_path(config_file, "daemon.otherKey", "2")
    assert config_file.read_bytes() == before
    # Removing one is a change the user may make.
    set_path(config_file, "futureSection", "null")
    assert json.loads(config_file.read_text()) == {"daemon": {"futureKey": True, "listen": "b:2"}}


def test_set_refuses_invalid_values(config_file: Path) -> None:
    with pytest.raises(ConfigError, match=r"daemon\.git\.maxProcessConcurrency: "):
        set_path(config_file, "daemon.git.maxProcessConcurrency", "0")
    assert not config_file.exists()


def test_set_migrates_legacy_shapes(config_file: Path) -> None:
    write(
        config_file,
        {
            "daemon": {"allowedHosts": ["h"]},
            "providers": {"openai": {"apiKey": "sk-1"}},
            "features": {"dictation": {"stt": {"provider": "OpenAI"}}},
        },
    )
    result = set_path(config_file, "daemon.listen", "a:1")
    assert json.loads(config_file.read_text()) == {
        "daemon": {"hostnames": ["h"], "listen": "a:1"},
        "features": {"dictation": {"stt": {"provider": "openai", "apiKey": "sk-1"}}},
    }
    assert {w.path for w in result.warnings} == {"daemon.allowedHosts", "providers.openai.apiKey"}


def test_set_a_key_the_site_provider_ignores_is_refused(config_file: Path) -> None:
    write(config_file, {"features": {"dictation": {"stt": {"provider": "local"}}}})
    with pytest.raises(ConfigError, match=r"features\.dictation\.stt\.apiKey: unknown key"):
        set_path(config_file, "features.dictation.stt.apiKey", "k")


def test_set_a_new_site_defaults_to_local(config_file: Path) -> None:
    set_path(config_file, "features.voiceMode.stt.language", "de")
    assert json.loads(config_file.read_text()) == {
        "features": {"voiceMode": {"stt": {"language": "de", "provider": "local"}}}
    }


def test_set_keys_with_dots_and_list_items(config_file: Path) -> None:
    set_path(config_file, 'plugins["acme.tools"].enabled', "true")
    set_path(
        config_file,
        "daemon.terminalProfiles",
        '[{"id": "a", "name": "A", "command": "bash"}]',
    )
    set_path(config_file, "daemon.terminalProfiles[0].name", "Bash")
    data = json.loads(config_file.read_text())
    assert data["plugins"] == {"acme.tools": {"enabled": True}}
    assert get_path(data, "daemon.terminalProfiles.0.name") == "Bash"


def test_set_rejects_a_bad_path(config_file: Path) -> None:
    with pytest.raises(ConfigError):
        set_path(config_file, "daemon..listen", "x")
    with pytest.raises(ConfigError):
        set_path(config_file, "daemon.listen.port", "1")  # listen is a string


# --- patch -----------------------------------------------------------------------------------


def test_patch_deep_merges_and_replaces_lists_whole() -> None:
    raw = {
        "daemon": {
            "listen": "a:1",
            "terminalProfiles": [{"id": "a", "name": "A", "command": "x"}],
            "git": {"maxProcessConcurrency": 2},
        }
    }
    new = patch(raw, {"daemon": {"terminalProfiles": [], "git": {"maxProcessesPerSecond": 4}}})
    assert new == {
        "daemon": {
            "listen": "a:1",
            "terminalProfiles": [],
            "git": {"maxProcessConcurrency": 2, "maxProcessesPerSecond": 4},
        }
    }
    assert raw["daemon"]["terminalProfiles"] == [{"id": "a", "name": "A", "command": "x"}]


def test_patch_null_removes() -> None:
    assert patch({"app": {"baseUrl": "u"}, "log": {"level": "info"}}, {"app": None}) == {
        "log": {"level": "info"}
    }


def test_patch_switching_a_site_provider_replaces_the_site() -> None:
    raw = {
        "features": {"dictation": {"stt": {"provider": "openai", "apiKey": "k", "language": "en"}}}
    }
    assert patch(raw, {"features": {"dictation": {"stt": {"provider": "local"}}}}) == {
        "features": {"dictation": {"stt": {"provider": "local"}}}
    }
    # Same provider: fields merge and the write-only key survives a form re-save.
    assert patch(
        raw, {"features": {"dictation": {"stt": {"provider": "openai", "model": "m"}}}}
    ) == {
        "features": {
            "dictation": {
                "stt": {"provider": "openai", "apiKey": "k", "language": "en", "model": "m"}
            }
        }
    }


def test_patch_file_validates_and_writes(config_file: Path) -> None:
    patch_file(
        config_file, {"agents": {"skills": {"selection": {"mode": "custom", "skills": ["a"]}}}}
    )
    patch_file(config_file, {"agents": {"skills": {"selection": {"mode": "all"}}}})
    assert json.loads(config_file.read_text()) == {
        "agents": {"skills": {"selection": {"mode": "all"}}}
    }
    with pytest.raises(ConfigError):
        patch_file(config_file, {"agents": {"skills": {"selection": {"mode": "some"}}}})


# --- validate ----------------------------------------------------------------------------------


def test_validate_file_reports_errors_and_warnings(config_file: Path) -> None:
    write(
        config_file,
        {
            "daemon": {"allowedHosts": ["h"], "git": {"maxProcessConcurrency": 0}},
            "futureSection": 1,
        },
    )
    problems = validate_file(config_file)
    assert {(p.path, p.severity) for p in problems} == {
        ("daemon.allowedHosts", "warning"),
        ("futureSection", "warning"),
        ("daemon.git.maxProcessConcurrency", "error"),
    }


def test_validate_file_accepts_missing_and_valid_files(config_file: Path) -> None:
    assert validate_file(config_file) == []
    write(config_file, FULL_CONFIG)
    assert validate_file(config_file) == []


def test_validate_file_reports_bad_json(config_file: Path) -> None:
    write(config_file, "nope")
    [problem] = validate_file(config_file)
    assert problem.severity == "error"
    assert problem.path == "(root)"


def test_set_a_site_provider_replaces_the_site(config_file: Path) -> None:
    write(
        config_file,
        {"features": {"dictation": {"stt": {"provider": "openai", "apiKey": "k", "model": "m"}}}},
    )
    set_path(config_file, "features.dictation.stt.provider", "local")
    assert json.loads(config_file.read_text()) == {
        "features": {"dictation": {"stt": {"provider": "local"}}}
    }
    set_path(config_file, "features.dictation.stt.provider", "local")  # same: no change
    set_path(config_file, "features.dictation.stt.model", "parakeet")
    set_path(config_file, "features.dictation.stt.provider", "local")
    assert json.loads(config_file.read_text()) == {
        "features": {"dictation": {"stt": {"provider": "local", "model": "parakeet"}}}
    }
