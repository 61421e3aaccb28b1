"""The MCP plugin's settings section: its defaults, the old ``daemon.mcp.*`` and
``agents.providers.<id>.paseoTools`` keys still read (and written at the new place), the
values start-up refuses, and ``PASEO_MCP``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from paseo_mcp.guard import provider_policy
from paseo_mcp.settings import McpSettings, read_settings

from paseo.config import ConfigError, load_config, set_path
from paseo.config.load import patch_file


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document))
    return path


def _settings(path: Path, env: dict[str, str] | None = None) -> McpSettings:
    loaded = load_config(path, env={})
    section = loaded.plugin_entries.get("mcp", {}).get("settings")
    return read_settings(section, env or {})


def test_defaults() -> None:
    settings = read_settings(None, {})
    assert (settings.enabled, settings.injectIntoAgents) == (True, True)
    assert settings.callerScope == "created"
    assert provider_policy(settings, "claude").offers("kill_agent")


def test_old_keys_are_read_as_the_plugins_section(tmp_path: Path) -> None:
    config = _write(
        tmp_path / "config.json",
        {
            "daemon": {"mcp": {"injectIntoAgents": False, "callerScope": "workspace"}},
            "agents": {"providers": {"claude": {"paseoTools": {"disabledTools": ["kill_agent"]}}}},
        },
    )
    settings = _settings(config)
    assert settings.injectIntoAgents is False
    assert settings.callerScope == "workspace"
    policy = provider_policy(settings, "claude")
    assert not policy.offers("kill_agent")
    assert policy.offers("list_agents")
    warned = {w.path for w in load_config(config, env={}).warnings}
    assert {"daemon.mcp", "agents.providers.claude.paseoTools"} <= warned


def test_the_new_place_wins_and_a_write_migrates_the_file(tmp_path: Path) -> None:
    config = _write(
        tmp_path / "config.json",
        {
            "daemon": {"mcp": {"callerScope": "all", "enabled": False}},
            "plugins": {"mcp": {"settings": {"callerScope": "workspace"}}},
        },
    )
    assert _settings(config).callerScope == "workspace"
    # A change made at the old path lands at the new one, and the old key is gone.
    set_path(config, "daemon.mcp.callerScope", "all")
    written = json.loads(config.read_text())
    assert "mcp" not in written.get("daemon", {})
    assert written["plugins"]["mcp"]["settings"] == {"callerScope": "all", "enabled": False}
    patch_file(config, {"daemon": {"mcp": {"injectIntoAgents": False}}})
    assert _settings(config).injectIntoAgents is False


def test_a_value_start_up_refuses_is_refused_at_the_new_path(tmp_path: Path) -> None:
    config = _write(tmp_path / "config.json", {})
    with pytest.raises(ConfigError) as refused:
        set_path(config, "daemon.mcp.callerScope", "everyone")
    assert "plugins.mcp.settings.callerScope" in str(refused.value)
    assert json.loads(config.read_text()) == {}


def test_paseo_mcp_false_wins_over_the_file() -> None:
    assert read_settings({"enabled": True}, {"PASEO_MCP": "false"}).enabled is False
    assert read_settings({"enabled": False}, {"PASEO_MCP": "1"}).enabled is True
    assert read_settings({"enabled": False}, {}).enabled is False
