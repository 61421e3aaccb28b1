"""The settings room's translations: the TypeScript mutable config to and from this daemon's
``config.json``, and a provider diagnostic in the TypeScript daemon's layout."""

from __future__ import annotations

import pytest
from paseo_tswire.handlers import settings
from paseo_tswire.models import settings as st


def test_a_typescript_patch_becomes_a_patch_of_this_daemon_s_sections() -> None:
    patch = st.DaemonConfigPatch.model_validate(
        {
            "mcp": {"injectIntoAgents": False},
            "providers": {"claude": {"enabled": False, "order": 2}},
        }
    )
    assert settings.to_patch(patch) == {
        "plugins": {"mcp": {"settings": {"injectIntoAgents": False}}},
        # A field the TypeScript schema passes through travels for config.patch to validate.
        "agents": {"providers": {"claude": {"enabled": False, "order": 2}}},
    }
    assert settings.to_patch(st.DaemonConfigPatch.model_validate({})) == {}


def test_a_key_of_another_section_is_refused_by_name() -> None:
    patch = st.DaemonConfigPatch.model_validate({"daemon": {"listen": "0.0.0.0:1"}, "log": {}})
    with pytest.raises(ValueError, match="daemon, log"):
        settings.to_patch(patch)


def test_the_view_reads_the_mcp_setting_where_it_is_and_keeps_redactions() -> None:
    got = {
        "config": {
            "daemon": {"mcp": {"injectIntoAgents": False}},
            "agents": {"providers": {"claude": {"env": {"ANTHROPIC_API_KEY": "********"}}}},
        }
    }
    view = settings.daemon_view(got).wire()
    assert view == {
        "mcp": {"injectIntoAgents": False},
        "providers": {"claude": {"env": {"ANTHROPIC_API_KEY": "********"}}},
    }
    moved = {"config": {"plugins": {"mcp": {"settings": {"injectIntoAgents": True}}}}}
    assert settings.daemon_view(moved).wire() == {
        "mcp": {"injectIntoAgents": True},
        "providers": {},
    }
    assert settings.daemon_view({"config": {}}).mcp.injectIntoAgents is True


def test_a_diagnostic_prints_as_the_typescript_daemon_prints_one() -> None:
    found = {
        "providerId": "claude",
        "label": "Claude Code",
        "enabled": True,
        "availability": {"status": "error", "reason": "not logged in: run `claude login`"},
        "program": {"command": "claude", "path": "/usr/bin/claude", "version": "2.0.1"},
        "models": None,
    }
    assert settings.diagnostic_text(found).splitlines() == [
        "Claude Code",
        "  Binary: /usr/bin/claude",
        "  Version: 2.0.1",
        "  Enabled: yes",
        "  Status: Error (not logged in: run `claude login`)",
        "  Models: Not checked",
    ]
    ready = {**found, "availability": {"status": "ready"}, "program": None, "models": 3}
    assert settings.diagnostic_text(ready).splitlines()[-2:] == ["  Status: Ready", "  Models: 3"]
