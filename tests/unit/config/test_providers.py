"""``agents.providers`` checked against the providers that are installed."""

from __future__ import annotations

from typing import Any

from paseo.config.models import AgentsConfig
from paseo.config.providers import provider_problems


def _problems(
    providers: dict[str, Any], registered: tuple[str, ...], declared: tuple[str, ...] = ()
) -> list[tuple[str, str, str]]:
    config = AgentsConfig.model_validate({"providers": providers})
    return [
        (p.path, p.message, p.severity)
        for p in provider_problems(config.providers or {}, registered, declared)
    ]


def test_entries_of_installed_providers_have_no_problems() -> None:
    providers = {
        "claude": {"enabled": False},
        "mine": {"command": ["x"]},
        "zai": {"extends": "claude", "label": "Z.ai"},
    }
    assert _problems(providers, ("claude", "codex"), declared=("mine",)) == []


def test_unknown_extends_is_a_warning_naming_the_installed_providers() -> None:
    assert _problems({"zai": {"extends": "gemini", "label": "Z"}}, ("codex", "claude")) == [
        (
            "agents.providers.zai.extends",
            'unknown provider "gemini" (installed providers: claude, codex)',
            "warning",
        )
    ]


def test_a_declared_provider_cannot_be_extended() -> None:
    # Derived providers are made by a registered provider's derive; a manifest's is not one.
    problems = _problems({"zai": {"extends": "mine", "label": "Z"}}, ("acp",), declared=("mine",))
    assert [message for _, message, _ in problems] == [
        'unknown provider "mine" (installed providers: acp)'
    ]


def test_an_entry_for_no_installed_provider_must_extend_one() -> None:
    assert _problems({"zai": {"label": "Z"}}, ()) == [
        (
            "agents.providers.zai.extends",
            'custom provider "zai" must declare extends, or name an installed provider '
            "(installed providers: none)",
            "warning",
        )
    ]
