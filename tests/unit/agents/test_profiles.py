"""How an agent profile fills in a new agent's settings (:mod:`paseo.agents.profiles`)."""

from __future__ import annotations

import pytest
from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.records import AgentBudget

from paseo.agents.models import AgentCreateParams
from paseo.agents.profiles import apply_profile, find_profile
from paseo.config.models import AgentProfile, ProfileBudget

PROFILE = AgentProfile(
    id="p1",
    name="Careful",
    provider="claude",
    model="claude-haiku-4-5",
    modeId="plan",
    thinkingOptionId="high",
    featureValues={"fast": True},
    systemPrompt="Think twice.",
    mcpServers={"docs": {"command": "docs"}},
    labels={"team": "a", "kind": "careful"},
)


def test_the_profile_fills_what_is_unset() -> None:
    params = apply_profile(AgentCreateParams(cwd="/w"), PROFILE)
    assert (params.provider, params.model, params.modeId, params.thinkingOptionId) == (
        "claude",
        "claude-haiku-4-5",
        "plan",
        "high",
    )
    assert params.systemPrompt == "Think twice."
    assert params.featureValues == {"fast": True}
    assert params.labels == {"team": "a", "kind": "careful"}


def test_what_the_caller_names_wins_key_by_key() -> None:
    given = AgentCreateParams(
        cwd="/w",
        modeId="default",
        systemPrompt="Be quick.",
        labels={"team": "b"},
        mcpServers={"docs": {"command": "mine"}},
    )
    params = apply_profile(given, PROFILE)
    assert (params.modeId, params.systemPrompt) == ("default", "Be quick.")
    assert params.labels == {"team": "b", "kind": "careful"}
    assert params.mcpServers == {"docs": {"command": "mine"}}
    assert params.model == "claude-haiku-4-5"


def test_a_slash_model_or_another_provider_keeps_the_profiles_model_out() -> None:
    slash = apply_profile(AgentCreateParams(cwd="/w", provider="claude/claude-opus-4-7"), PROFILE)
    assert (slash.provider, slash.model, slash.modeId) == ("claude/claude-opus-4-7", None, "plan")
    other = apply_profile(AgentCreateParams(cwd="/w", provider="codex"), PROFILE)
    assert (other.model, other.modeId, other.thinkingOptionId) == (None, None, None)
    assert other.featureValues == {}
    assert other.systemPrompt == "Think twice."
    assert other.labels == {"team": "a", "kind": "careful"}


def test_profiles_are_found_by_id_or_name_and_a_miss_lists_them() -> None:
    assert find_profile([PROFILE], "p1") is PROFILE
    assert find_profile([PROFILE], "Careful") is PROFILE
    with pytest.raises(NotFound, match="unknown agent profile 'x'; known profiles: Careful"):
        find_profile([PROFILE], "x")
    with pytest.raises(NotFound, match=r"no profiles are configured \(daemon.agentProfiles"):
        find_profile([], "x")


def test_a_profiles_budget_applies_unless_the_caller_gives_one() -> None:
    capped = PROFILE.model_copy(update={"budget": ProfileBudget(tokens=5000)})
    params = apply_profile(AgentCreateParams(cwd="/w"), capped)
    assert params.budget == AgentBudget(tokens=5000)
    other = apply_profile(AgentCreateParams(cwd="/w", provider="codex"), capped)
    assert other.budget == AgentBudget(tokens=5000)  # a cap is not provider-specific
    own = apply_profile(AgentCreateParams(cwd="/w", budget=AgentBudget(usd=2.5)), capped)
    assert own.budget == AgentBudget(usd=2.5)  # the caller's budget wins whole
    assert apply_profile(AgentCreateParams(cwd="/w"), PROFILE).budget is None
