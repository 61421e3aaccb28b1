"""Changing an agent's mode, model, thinking level or a feature: live in its session when one
runs, checked against the provider's modes when none does, and always kept in the record's
``config`` (so the next session starts with it).
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.records import dump_record

from paseo.agents.live import LiveAgent, runtime_changes
from paseo.agents.process import AgentProcessLauncher
from paseo.agents.registry import ProviderRegistry


async def option_changes(
    agent: LiveAgent,
    option: str,
    value: Any,
    feature: str | None,
    *,
    registry: ProviderRegistry,
    launcher: AgentProcessLauncher,
) -> dict[str, Any]:
    """Set ``option`` (``modeId``, ``model``, ``thinkingOptionId`` or ``feature``) to ``value``
    in the live session, if any; returns the record changes that follow. The caller holds
    ``agent.lock`` (no session starts or closes meanwhile)."""
    session = agent.session
    if session is not None:
        if option == "modeId":
            await session.set_mode(value)
        elif option == "model":
            await session.set_model(value)
        elif option == "thinkingOptionId":
            await session.set_thinking(value)
        else:
            await session.set_feature(str(feature), value)
    elif option == "modeId":
        provider = registry.usable(agent.record.provider)
        try:
            modes = await provider.list_modes(launcher)
        except Unavailable:
            modes = []  # cannot check now: the next session start will
        if modes and value not in {m.id for m in modes}:
            raise InvalidParams(
                f"provider {agent.record.provider!r} has no mode {value!r} "
                f"(modes: {', '.join(m.id for m in modes)})"
            )
    config = dump_record(agent.record.config) if agent.record.config else {}
    if option == "feature":
        config["featureValues"] = {
            **(config.get("featureValues") or {}),
            str(feature): value,
        }
    else:
        config[option] = value
    changes: dict[str, Any] = {"config": config}
    if option == "modeId":
        changes["lastModeId"] = value
    if session is not None:
        changes.update(runtime_changes(agent, session))
    return changes
