"""Modes, models and thinking levels as an ACP agent advertises them for a session.

Agents describe them in the ``session/new`` (or ``session/load``) result in up to three ways:

- ``configOptions``: select options with a ``category`` of ``mode``, ``model`` or
  ``thought_level`` (current ACP), changed with ``session/set_config_option``;
- ``modes`` (``currentModeId`` + ``availableModes``), changed with ``session/set_mode``;
- ``models`` (``currentModelId`` + ``availableModels``, an older unstable extension), changed
  with ``session/set_model``.

A config option wins over the older shape for the same setting, because agents that send both
keep the option authoritative and mirror it into the older shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo, ThinkingOption

Setting = Literal["mode", "model", "thinking"]

SETTING_NAMES: dict[Setting, str] = {"mode": "mode", "model": "model", "thinking": "thinking level"}
"""How an error message names each setting."""
_CATEGORY: dict[Setting, str] = {"mode": "mode", "model": "model", "thinking": "thought_level"}


@dataclass
class Choice:
    """One selectable value of a setting."""

    id: str
    label: str
    description: str | None = None


@dataclass
class SettingState:
    """What one setting offers, its current value, and how to change it."""

    choices: list[Choice] = field(default_factory=list)
    current: str | None = None
    config_id: str | None = None
    """The ``configOptions`` id when the setting is a config option."""
    legacy: bool = False
    """Changed with ``session/set_mode`` / ``session/set_model`` instead."""

    def ids(self) -> list[str]:
        """The selectable ids, in the agent's order."""
        return [choice.id for choice in self.choices]


def _select_choices(option: Mapping[str, Any]) -> list[Choice]:
    choices: list[Choice] = []
    for entry in option.get("options") or []:
        if not isinstance(entry, Mapping):
            continue
        # Options may be grouped: [{group, name, options: [...]}].
        nested = entry.get("options")
        for item in nested if isinstance(nested, list) else [entry]:
            if isinstance(item, Mapping) and isinstance(item.get("value"), str):
                choices.append(
                    Choice(
                        str(item["value"]),
                        str(item.get("name") or item["value"]),
                        item.get("description")
                        if isinstance(item.get("description"), str)
                        else None,
                    )
                )
    return choices


@dataclass
class SessionOptions:
    """The mode, model and thinking settings of one ACP session."""

    mode: SettingState = field(default_factory=SettingState)
    model: SettingState = field(default_factory=SettingState)
    thinking: SettingState = field(default_factory=SettingState)

    def setting(self, name: Setting) -> SettingState:
        """The state of ``name``."""
        return {"mode": self.mode, "model": self.model, "thinking": self.thinking}[name]

    def update_from(self, result: Mapping[str, Any]) -> None:
        """Read the shapes in a ``session/new``/``session/load`` result (or a
        ``config_option_update``, which carries ``configOptions`` only)."""
        modes = result.get("modes")
        if isinstance(modes, Mapping) and self.mode.config_id is None:
            self.mode = SettingState(
                [
                    Choice(str(m["id"]), str(m.get("name") or m["id"]), m.get("description"))
                    for m in modes.get("availableModes") or []
                    if isinstance(m, Mapping) and isinstance(m.get("id"), str)
                ],
                _str(modes.get("currentModeId")),
                legacy=True,
            )
        models = result.get("models")
        if isinstance(models, Mapping) and self.model.config_id is None:
            self.model = SettingState(
                [
                    Choice(
                        str(m["modelId"]), str(m.get("name") or m["modelId"]), m.get("description")
                    )
                    for m in models.get("availableModels") or []
                    if isinstance(m, Mapping) and isinstance(m.get("modelId"), str)
                ],
                _str(models.get("currentModelId")),
                legacy=True,
            )
        for option in result.get("configOptions") or []:
            if not isinstance(option, Mapping) or option.get("type", "select") != "select":
                continue
            for name, category in _CATEGORY.items():
                if option.get("category") == category and isinstance(option.get("id"), str):
                    state = SettingState(
                        _select_choices(option),
                        _str(option.get("currentValue")),
                        config_id=str(option["id"]),
                    )
                    setattr(self, name, state)

    def check(self, name: Setting, value: str) -> None:
        """``InvalidParams`` saying what the agent offers unless ``value`` is one of ``name``."""
        state = self.setting(name)
        label = SETTING_NAMES[name]
        if not state.choices:
            raise InvalidParams(f"this ACP agent offers no {label} setting")
        if value not in state.ids():
            offered = ", ".join(state.ids())
            raise InvalidParams(f"unknown {label} {value!r}; this agent offers: {offered}")

    def set_current(self, name: Setting, value: str) -> None:
        """Record a value the agent confirmed (or announced with an update)."""
        self.setting(name).current = value

    def change_request(
        self, name: Setting, value: str, session_id: str
    ) -> tuple[str, dict[str, Any]]:
        """The ACP method and params that switch ``name`` to ``value``."""
        state = self.setting(name)
        if state.config_id is not None:
            return "session/set_config_option", {
                "sessionId": session_id,
                "configId": state.config_id,
                "value": value,
            }
        if name == "mode":
            return "session/set_mode", {"sessionId": session_id, "modeId": value}
        return "session/set_model", {"sessionId": session_id, "modelId": value}

    def modes(self) -> list[ModeInfo]:
        """The modes as Paseo describes them."""
        return [
            ModeInfo(id=c.id, label=c.label, description=c.description) for c in self.mode.choices
        ]

    def models(self) -> list[ModelInfo]:
        """The models, each offering the session's thinking levels (ACP scopes them to the
        session's current model; it is the best knowledge there is for the others)."""
        thinking = [ThinkingOption(id=c.id, label=c.label) for c in self.thinking.choices]
        return [
            ModelInfo(
                id=c.id,
                label=c.label,
                default=c.id == self.model.current,
                thinkingOptions=list(thinking),
            )
            for c in self.model.choices
        ]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
