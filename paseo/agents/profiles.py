"""Agent profiles (``daemon.agentProfiles``): named launch bundles applied to a new agent.

A profile's fields are defaults: whatever the caller names itself (provider, model, mode,
thinking level, system prompt, a feature, an MCP server, a label, a budget) wins, field by
field and, for the mappings, key by key. A profile is named by its ``id`` or its ``name``
(both unique, see :mod:`paseo.config.models`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.records import AgentBudget

from paseo.config.models import AgentProfile

if TYPE_CHECKING:
    from paseo.agents.models import AgentCreateParams


def find_profile(profiles: Sequence[AgentProfile], reference: str) -> AgentProfile:
    """The profile whose id or name is ``reference``; ``NotFound`` names the known ones."""
    for profile in profiles:
        if reference in (profile.id, profile.name):
            return profile
    known = ", ".join(profile.name for profile in profiles)
    hint = (
        f"known profiles: {known}"
        if known
        else "no profiles are configured (daemon.agentProfiles in config.json)"
    )
    raise NotFound(f"unknown agent profile {reference!r}; {hint}", data={"profile": reference})


def apply_profile(params: AgentCreateParams, profile: AgentProfile) -> AgentCreateParams:
    """``params`` with ``profile`` filling in what the caller left unset.

    Model, mode, thinking level and features belong to one provider: when the caller names
    another provider than the profile's, only the profile's system prompt, MCP servers and
    labels apply."""
    changes: dict[str, Any] = {}
    named, _, slash_model = (params.provider or "").partition("/")
    if not named:
        changes["provider"] = profile.provider
    own_provider = not named or named == profile.provider
    scalars = ["systemPrompt"]
    mappings = ["mcpServers", "labels"]
    if own_provider:
        scalars += ["modeId", "thinkingOptionId"] + ([] if slash_model else ["model"])
        mappings.append("featureValues")
    for field in scalars:
        value = getattr(profile, field)
        if value is not None and getattr(params, field) is None:
            changes[field] = value
    for field in mappings:
        defaults = getattr(profile, field) or {}
        if defaults:
            changes[field] = {**defaults, **getattr(params, field)}
    given = params.budget
    if profile.budget is not None and (given is None or (given.tokens, given.usd) == (None, None)):
        # A cap is not provider-specific: it applies whichever provider the caller names.
        changes["budget"] = AgentBudget(tokens=profile.budget.tokens, usd=profile.budget.usd)
    return params.model_copy(update=changes)
