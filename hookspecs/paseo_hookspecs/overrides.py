"""The overrides of a custom provider (``agents.providers.<id>`` with ``extends``), checked.

A provider's :meth:`~paseo_hookspecs.interfaces.agent.AgentProvider.derive` receives them as a
plain mapping; :meth:`ProviderOverrides.parse` gives the common ones typed, with an
``InvalidParams`` naming the provider and the field for a wrong shape, so every provider refuses
bad input the same way::

    def derive(self, provider_id, label, overrides):
        given = ProviderOverrides.parse(provider_id, overrides)
        return MyProvider(
            provider_id,
            label,
            command=given.command or self.command,
            env={**self.env, **given.env},
        )
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import ModelInfo


@dataclass(frozen=True)
class ProviderOverrides:
    """``command`` (argv; a string is one program), ``env``, ``models`` (replaces discovery)
    and ``additionalModels`` (merged by id) of a custom provider entry."""

    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    models: list[Any] | None = None
    additional_models: list[Any] = field(default_factory=list)

    @classmethod
    def parse(cls, provider_id: str, overrides: Mapping[str, Any]) -> ProviderOverrides:
        command = overrides.get("command")
        if isinstance(command, str) and command:
            command = [command]
        elif command is not None and not (
            isinstance(command, list) and command and all(isinstance(a, str) for a in command)
        ):
            raise InvalidParams(
                f"provider {provider_id!r}: command must be a path or an argv list",
                data={"path": f"agents.providers.{provider_id}.command"},
            )
        env = overrides.get("env") or {}
        if not isinstance(env, Mapping):
            raise InvalidParams(
                f"provider {provider_id!r}: env must be an object",
                data={"path": f"agents.providers.{provider_id}.env"},
            )
        models = overrides.get("models")
        additional = overrides.get("additionalModels")
        return cls(
            command=command,
            env={str(k): str(v) for k, v in env.items()},
            models=models if isinstance(models, list) else None,
            additional_models=additional if isinstance(additional, list) else [],
        )


def override_model(entry: Any) -> ModelInfo | None:
    """One entry of ``models``/``additionalModels``: a model id, or a ModelInfo-shaped object
    (``label`` defaults to the id); ``None`` for anything else."""
    if isinstance(entry, str) and entry:
        return ModelInfo(id=entry, label=entry)
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        data = {"label": entry["id"], **entry}
        return ModelInfo.model_validate(
            {k: v for k, v in data.items() if k in ModelInfo.model_fields}
        )
    return None


__all__ = ["ProviderOverrides", "override_model"]
