"""Rules that belong to one provider live in that provider, not in the kernel's config schema."""

from __future__ import annotations

import pytest
from paseo_acp.provider import AcpProvider
from paseo_claude.provider import ClaudeProvider
from paseo_codex.provider import CodexProvider
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import AgentProvider
from paseo_hookspecs.overrides import ProviderOverrides
from paseo_hookspecs.terminals import PROMPT_SENTINEL

from paseo.agents.registry import ProviderRegistry


def test_an_acp_entry_without_a_command_cannot_be_derived() -> None:
    with pytest.raises(InvalidParams) as caught:
        AcpProvider().derive("zed", "Zed", {"env": {"A": "1"}})
    assert "agents.providers.zed.command" in caught.value.message
    derived = AcpProvider().derive("zed", "Zed", {"command": ["zed-agent", "--acp"]})
    assert derived.id == "zed"


def test_the_registry_reports_the_acp_rule_as_the_entry_s_problem() -> None:
    registry = ProviderRegistry(
        {"acp": AcpProvider()}, lambda: {"zed": {"extends": "acp", "label": "Zed"}}
    )
    entry = {e.id: e for e in registry.entries()}["zed"]
    assert entry.provider is None
    assert entry.problem is not None
    assert "must declare command" in entry.problem


@pytest.mark.parametrize(
    ("provider", "program"), [(ClaudeProvider(), "claude"), (CodexProvider(), "codex")]
)
def test_agent_programs_offer_their_terminal_profile(
    provider: AgentProvider, program: str
) -> None:
    profile = provider.terminal_profile()
    assert profile is not None
    assert profile.command == program
    assert profile.args == [PROMPT_SENTINEL]
    assert AcpProvider().terminal_profile() is None


def test_custom_provider_overrides_are_checked_alike_for_every_provider() -> None:
    parsed = ProviderOverrides.parse(
        "mine", {"command": "my-codex", "env": {"A": 1}, "additionalModels": [{"id": "m"}]}
    )
    assert parsed.command == ["my-codex"]
    assert parsed.env == {"A": "1"}
    assert parsed.models is None
    assert parsed.additional_models == [{"id": "m"}]
    for bad, field in (({"command": [1]}, "command"), ({"env": ["x"]}, "env")):
        with pytest.raises(InvalidParams) as caught:
            CodexProvider().derive("mine", "Mine", bad)
        assert caught.value.data == {"path": f"agents.providers.mine.{field}"}
