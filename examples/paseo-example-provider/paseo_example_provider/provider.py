"""The ``example`` provider: what the daemon asks of a kind of agent, answered for the example
agent program (:mod:`paseo_example_provider.agent`).

Configuration (``config.json``), all optional::

    "agents": {"providers": {
        "example": {"env": {"EXAMPLE_AGENT_BASE_URL": "https://api.openai.com/v1"}},
        "example-large": {"extends": "example", "label": "Example (large)",
                          "models": [{"id": "gpt-4.1", "label": "GPT-4.1"}]}}}

``env`` is layered under each session's environment (the daemon's own environment below both);
``models`` replaces the model list and ``additionalModels`` extends it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    Availability,
    EventSink,
    ModeInfo,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher

from paseo_example_provider.session import ExampleSession

DEFAULT_MODELS = (
    ModelInfo(id="gpt-4.1-mini", label="GPT-4.1 mini", default=True),
    ModelInfo(id="gpt-4.1", label="GPT-4.1"),
)
"""The models offered unless ``models`` in config.json says otherwise: OpenAI's names (another
endpoint has its own; list them under ``models``). The first is the agent's own default."""

MODES = (
    ModeInfo(
        id="ask", label="Ask", description="every file write needs your permission", access="ask"
    ),
    ModeInfo(
        id="auto", label="Auto", description="file writes go ahead without asking", access="edits"
    ),
)

_SUPPORTED_OVERRIDES = frozenset({"env", "models", "additionalModels", "description"})


def _models(value: Any, key: str) -> list[ModelInfo]:
    if not isinstance(value, list):
        raise InvalidParams(f"{key} must be a list of models ({{id, label}})")
    return [
        ModelInfo(
            id=str(entry["id"]),
            label=str(entry.get("label") or entry["id"]),
            default=bool(entry.get("isDefault")),
        )
        for entry in value
        if isinstance(entry, Mapping) and entry.get("id")
    ]


class ExampleProvider(AgentProvider):
    """Starts example agent sessions; see the module docstring."""

    def __init__(
        self,
        provider_id: str = "example",
        label: str = "Example agent",
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.id = provider_id
        self.label = label
        overrides = dict(overrides or {})
        unsupported = sorted(set(overrides) - _SUPPORTED_OVERRIDES)
        if unsupported:
            # The registry prefixes every message with where the setting is.
            raise InvalidParams(
                f"the example provider does not support {', '.join(unsupported)} "
                f"(it supports {', '.join(sorted(_SUPPORTED_OVERRIDES))})"
            )
        env = overrides.get("env") or {}
        if not isinstance(env, Mapping):
            raise InvalidParams("env must map variable names to strings")
        self._env = {str(k): str(v) for k, v in env.items()}
        models = list(DEFAULT_MODELS)
        if "models" in overrides:
            models = _models(overrides["models"], "models")
        added = _models(overrides.get("additionalModels", []), "additionalModels")
        by_id = {model.id: model for model in [*models, *added]}
        self._models = list(by_id.values())

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        """A custom provider (``"extends": "example"``): this one's settings with
        ``overrides`` on top, reporting ``provider_id`` everywhere."""
        env = {**self._env, **dict(overrides.get("env") or {})}
        return ExampleProvider(provider_id, label, {**overrides, "env": env})

    async def availability(self) -> Availability:
        # Cheap and process-free, as the contract asks: the program ships with this package,
        # so the only thing that can be missing is where the model lives.
        if self._env.get("EXAMPLE_AGENT_BASE_URL") or os.environ.get("EXAMPLE_AGENT_BASE_URL"):
            return Availability(status="ready")
        return Availability(
            status="unavailable",
            reason=(
                "EXAMPLE_AGENT_BASE_URL is not set: start the daemon with it (and "
                f"EXAMPLE_AGENT_API_KEY) or set agents.providers.{self.id}.env in config.json"
            ),
        )

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        return list(self._models)  # known without asking the program: launcher unused

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return list(MODES)

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        return await ExampleSession.start(
            provider_id=self.id,
            config=config,
            env=self._session_env(config),
            sink=sink,
            launcher=launcher,
        )

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        return await ExampleSession.start(
            provider_id=self.id,
            config=config,
            env=self._session_env(config),
            sink=sink,
            launcher=launcher,
            resume=handle.sessionId,
        )

    def _session_env(self, config: SessionConfig) -> dict[str, str]:
        # config.env last: it carries PASEO_AGENT_ID, which nothing may override.
        return {**self._env, **config.env}
