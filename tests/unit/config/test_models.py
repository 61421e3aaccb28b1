"""The persisted schema: every field round-trips, and invalid values are refused."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from paseo.config import PaseoConfig

from .conftest import FULL_CONFIG


def roundtrip(data: dict[str, Any]) -> dict[str, Any]:
    return PaseoConfig.model_validate(data).to_json()


def test_every_field_round_trips(full_config: dict[str, Any]) -> None:
    assert roundtrip(full_config) == FULL_CONFIG


def test_dump_holds_only_what_was_set() -> None:
    assert roundtrip({}) == {}
    assert roundtrip({"daemon": {"git": {"maxProcessConcurrency": 2}}}) == {
        "daemon": {"git": {"maxProcessConcurrency": 2}}
    }


@pytest.mark.parametrize(
    ("site_path", "site"),
    [
        (("dictation", "stt"), {"provider": "local", "model": "m", "language": "de"}),
        (
            ("voiceMode", "stt"),
            {
                "provider": "openai",
                "model": "whisper-1",
                "language": "de",
                "apiKey": "k",
                "baseUrl": "u",
                "confidenceThreshold": -1,
            },
        ),
        (("voiceMode", "turnDetection"), {"provider": "openai"}),
        (
            ("voiceMode", "tts"),
            {
                "provider": "openai",
                "model": "tts-1",
                "voice": "alloy",
                "speed": 1.5,
                "apiKey": "k",
                "baseUrl": "u",
            },
        ),
    ],
)
def test_every_speech_variant_round_trips(site_path: tuple[str, str], site: dict[str, Any]) -> None:
    data = {"features": {site_path[0]: {site_path[1]: site}}}
    assert roundtrip(copy.deepcopy(data)) == data


def test_hostnames_and_trusted_proxies_accept_true() -> None:
    data = {"daemon": {"hostnames": True, "trustedProxies": True}}
    assert roundtrip(data) == data


@pytest.mark.parametrize(
    "data",
    [
        {"version": 2},
        {"daemon": {"hostnames": False}},
        {"daemon": {"hostnames": ["ok", 3]}},
        {"daemon": {"git": {"maxProcessConcurrency": 0}}},
        {"daemon": {"git": {"maxProcessConcurrency": "8"}}},  # no coercion
        {"daemon": {"git": {"maxProcessesPerSecond": True}}},
        {"daemon": {"auth": {"password": "plain-text"}}},
        {"daemon": {"terminalProfiles": [{"id": "x", "name": "X"}]}},
        {"worktrees": {"servicePorts": {"range": "4000-3000"}}},
        {"worktrees": {"servicePorts": {"range": "0-10"}}},
        {"worktrees": {"servicePorts": {"range": "3000-70000"}}},
        {"worktrees": {"servicePorts": {"range": "3000"}}},
        {"agents": {"skills": {"selection": {"mode": "custom"}}}},
        {"agents": {"skills": {"selection": {"mode": "all", "skills": []}}}},
        {"agents": {"providers": {"My_Claude": {"extends": "claude", "label": "x"}}}},
        {"agents": {"providers": {"zai": {"extends": "claude"}}}},
        {"agents": {"providers": {"claude": {"command": []}}}},
        {"agents": {"providers": {"claude": {"command": [""]}}}},
        {"agents": {"metadataGeneration": {"providers": [{"model": "x"}]}}},
        {"plugins": {"-bad": {}}},
        {"plugins": {"ok": {"source": "git"}}},
        {"features": {"dictation": {"stt": {"provider": "azure"}}}},
        {"features": {"dictation": {"stt": {"model": "m"}}}},  # provider is required
        {"features": {"dictation": {"stt": {"provider": "local", "apiKey": "k"}}}},
        {"features": {"voiceMode": {"tts": {"provider": "openai", "speakerId": 1}}}},
        {"log": {"level": "verbose"}},
        {"log": {"file": {"rotate": {"maxFiles": 0}}}},
        {"storage": {"driver": ""}},
        {"daemon": {"unknown": 1}},
    ],
)
def test_invalid_values_are_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        PaseoConfig.model_validate(data)


def test_builtin_providers_need_neither_extends_nor_label() -> None:
    data = {
        "agents": {"providers": {name: {"enabled": False} for name in ("claude", "acp", "omp")}}
    }
    assert roundtrip(data) == data


def test_the_schema_leaves_provider_ids_to_the_installed_plugins() -> None:
    # Whether "gemini" exists, or "zai" is a plugin's provider, is known only once plugins are
    # loaded (paseo.config.providers); what an acp entry needs is the acp provider's rule.
    data = {
        "agents": {
            "providers": {
                "zai": {"label": "Z"},
                "gem": {"extends": "gemini", "label": "G"},
                "bare-acp": {"extends": "acp", "label": "A"},
            }
        }
    }
    assert roundtrip(data) == data


def test_plugin_ids_may_be_entry_point_names() -> None:
    data = {"plugins": {"paseo_store.sqlite-2": {"enabled": True}, "Acme": {}}}
    assert roundtrip(data) == data


def test_migration_tables_match_the_models() -> None:
    from paseo.config import models
    from paseo.config.sites import SPEECH_SITE_FIELDS

    variants: dict[str, dict[str, type[BaseModel]]] = {
        "stt": {"local": models.LocalStt, "openai": models.OpenAiStt},
        "turnDetection": {
            "local": models.LocalTurnDetection,
            "openai": models.OpenAiTurnDetection,
        },
        "tts": {"local": models.LocalTts, "openai": models.OpenAiTts},
    }
    assert {
        kind: {provider: frozenset(model.model_fields) for provider, model in by_provider.items()}
        for kind, by_provider in variants.items()
    } == SPEECH_SITE_FIELDS
