"""Every write path refuses what the next daemon start would refuse, without touching the file:
plugin settings sections, the store driver, and documents too deep or too large."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paseo.config import ConfigError, load_config, load_for_startup, patch_file, set_path
from paseo.config.load import validate_file
from paseo.config.raw import MAX_BYTES, MAX_DEPTH

ORIGINAL = {"daemon": {"appendSystemPrompt": "be brief"}}


def _nested(depth: int) -> dict[str, Any]:
    document: dict[str, Any] = {"x": 1}
    for _ in range(depth - 1):
        document = {"x": document}
    return document


def _deep_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(ORIGINAL))
    return path


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("plugins.websocket.settings.maxConnections", "0", "greater than or equal to 1"),
        ("plugins.websocket.settings.noSuchLimit", "1", "unknown key"),
        ("plugins.websocket.settings.maxConnections", '"many"', "valid integer"),
    ],
)
def test_set_refuses_plugin_settings_the_plugin_refuses(
    config_file: Path, key: str, value: str, message: str
) -> None:
    before = config_file.read_bytes()
    with pytest.raises(ConfigError) as info:
        set_path(config_file, key, value)
    assert [(p.path, p.severity) for p in info.value.problems] == [(key, "error")]
    assert message in info.value.problems[0].message
    assert config_file.read_bytes() == before


def test_patch_refuses_an_uninstalled_store_driver(config_file: Path) -> None:
    before = config_file.read_bytes()
    with pytest.raises(ConfigError) as info:
        patch_file(config_file, {"storage": {"driver": "mongo"}})
    assert "storage.driver: no store driver named 'mongo'" in str(info.value)
    assert "installed: json, sqlite" in str(info.value)
    assert config_file.read_bytes() == before


@pytest.mark.parametrize("depth", [600, 5000])
def test_a_deep_patch_is_refused_before_anything_walks_it(config_file: Path, depth: int) -> None:
    before = config_file.read_bytes()
    with pytest.raises(ConfigError) as info:
        patch_file(config_file, {"plugins": {"acme": {"settings": _nested(depth)}}})
    assert f"nested deeper than {MAX_DEPTH} levels" in str(info.value)
    assert config_file.read_bytes() == before


@pytest.mark.parametrize("depth", [600, 5000])
def test_a_deep_value_on_the_command_line_is_refused(config_file: Path, depth: int) -> None:
    before = config_file.read_bytes()
    with pytest.raises(ConfigError, match="nested deeper"):
        set_path(config_file, "plugins.x.settings", _deep_text(depth))
    assert config_file.read_bytes() == before


def test_a_patch_making_the_file_too_large_is_refused(config_file: Path) -> None:
    before = config_file.read_bytes()
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        patch_file(config_file, {"daemon": {"appendSystemPrompt": "x" * MAX_BYTES}})
    assert config_file.read_bytes() == before


@pytest.mark.parametrize("depth", [600, 5000])
def test_a_deep_file_is_refused_cleanly_by_every_reader(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "config.json"
    path.write_text(_deep_text(depth))
    for read in (load_config, load_for_startup):
        with pytest.raises(ConfigError, match="nested deeper"):
            read(path, {})
    assert [p.message for p in validate_file(path, {})] == [
        f"nested deeper than {MAX_DEPTH} levels; no Paseo setting needs that"
    ]
    with pytest.raises(ConfigError, match="nested deeper"):
        set_path(path, "log.level", "debug")
    assert path.read_text() == _deep_text(depth)


def test_brackets_inside_strings_do_not_count_as_depth(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    prompt = '[{"\\"' * 200
    path.write_text(json.dumps({"daemon": {"appendSystemPrompt": prompt}}))
    assert load_config(path, {}).resolved.daemon.appendSystemPrompt == prompt


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"daemon": {"appendSystemPrompt": "x" * MAX_BYTES}}))
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_config(path, {})


def test_validate_reports_what_start_up_refuses(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "storage": {"driver": "mongo"},
                "plugins": {"websocket": {"settings": {"maxConnections": 0, "extra": 1}}},
                "agents": {"providers": {"mine": {"extends": "nobody", "label": "Mine"}}},
            }
        )
    )
    problems = {(p.path, p.severity) for p in validate_file(path, {})}
    assert problems == {
        ("storage.driver", "error"),
        ("plugins.websocket.settings.maxConnections", "error"),
        ("plugins.websocket.settings.extra", "error"),
        ("agents.providers.mine.extends", "warning"),
    }
    with pytest.raises(ConfigError):
        load_for_startup(path, {})


def test_validate_names_environment_overrides_it_cannot_use(config_file: Path) -> None:
    env = {"PASEO_GIT_MAX_PROCESS_CONCURRENCY": "abc", "PASEO_GIT_MAX_PROCESSES_PER_SECOND": "4"}
    problems = validate_file(config_file, env)
    assert [(p.path, p.severity) for p in problems] == [
        ("$PASEO_GIT_MAX_PROCESS_CONCURRENCY", "error")
    ]
    assert "whole number" in problems[0].message


def test_default_provider_is_in_the_resolved_view_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"agents": {"defaultProvider": "claude"}}))
    assert load_config(path, {}).resolved.agents.defaultProvider == "claude"
    assert validate_file(path, {}) == []
    path.write_text(json.dumps({"agents": {"defaultProvider": "nobody"}}))
    assert [(p.path, p.severity) for p in validate_file(path, {})] == [
        ("agents.defaultProvider", "warning")
    ]


def test_trash_retention_is_15_or_30_days_and_30_by_default(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{}")
    assert load_config(path, {}).resolved.agents.trashRetentionDays == 30
    path.write_text(json.dumps({"agents": {"trashRetentionDays": 15}}))
    assert load_config(path, {}).resolved.agents.trashRetentionDays == 15
    path.write_text(json.dumps({"agents": {"trashRetentionDays": 7}}))
    with pytest.raises(ConfigError) as info:
        load_for_startup(path, {})
    assert "agents.trashRetentionDays" in str(info.value)
    assert "15 or 30" in str(info.value)
    with pytest.raises(ConfigError, match=r"agents\.trashRetentionDays"):
        set_path(path, "agents.trashRetentionDays", "45")


def test_profiles_and_metadata_models_naming_no_installed_provider_are_warned(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.json"
    config = {
        "daemon": {
            "agentProfiles": [
                {"id": "a", "name": "A", "provider": "claude"},
                {"id": "b", "name": "B", "provider": "nobody"},
            ]
        },
        "agents": {"metadataGeneration": {"providers": [{"provider": "ghost"}]}},
    }
    path.write_text(json.dumps(config))
    problems = validate_file(path, {})
    assert [(p.path, p.severity) for p in problems] == [
        ("daemon.agentProfiles[1].provider", "warning"),
        ("agents.metadataGeneration.providers[0].provider", "warning"),
    ]
    assert "no provider 'nobody' is installed or defined" in problems[0].message
