"""Legacy config shapes migrate on the raw document, with warnings that never show values."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from paseo.config import ConfigProblem, PaseoConfig, migrate

SECRET = "sk-very-secret-value"


def assert_no_value_leaks(warnings: list[ConfigProblem], *values: str) -> None:
    for warning in warnings:
        for value in values:
            assert value not in str(warning)


def paths(warnings: list[ConfigProblem]) -> list[str]:
    return [warning.path for warning in warnings]


def test_migrate_never_mutates_its_input() -> None:
    raw = {"daemon": {"allowedHosts": ["a"]}, "providers": {"openai": {"apiKey": SECRET}}}
    before = copy.deepcopy(raw)
    migrate(raw)
    assert raw == before


def test_current_documents_are_unchanged() -> None:
    raw = {
        "daemon": {"hostnames": ["a"]},
        "features": {"dictation": {"stt": {"provider": "local"}}},
    }
    assert migrate(raw) == (raw, [])


def test_allowed_hosts_becomes_hostnames() -> None:
    doc, warnings = migrate({"daemon": {"allowedHosts": True, "listen": "x"}})
    assert doc == {"daemon": {"hostnames": True, "listen": "x"}}
    assert paths(warnings) == ["daemon.allowedHosts"]
    assert warnings[0].severity == "warning"


def test_hostnames_wins_over_allowed_hosts() -> None:
    doc, warnings = migrate({"daemon": {"allowedHosts": ["old"], "hostnames": ["new"]}})
    assert doc == {"daemon": {"hostnames": ["new"]}}
    assert paths(warnings) == ["daemon.allowedHosts"]


def test_legacy_replace_command_becomes_argv() -> None:
    doc, warnings = migrate(
        {
            "agents": {
                "providers": {
                    "claude": {
                        "command": {"mode": "replace", "argv": ["/opt/claude", "--x"]},
                        "env": {"K": SECRET},
                    }
                }
            }
        }
    )
    assert doc["agents"]["providers"]["claude"] == {
        "command": ["/opt/claude", "--x"],
        "env": {"K": SECRET},
    }
    assert paths(warnings) == ["agents.providers.claude.command"]
    assert_no_value_leaks(warnings, "/opt/claude", SECRET)
    PaseoConfig.model_validate(doc)


def test_legacy_default_command_is_removed() -> None:
    doc, warnings = migrate({"agents": {"providers": {"codex": {"command": {"mode": "default"}}}}})
    assert doc == {"agents": {"providers": {"codex": {}}}}
    assert paths(warnings) == ["agents.providers.codex.command"]


def test_legacy_append_command_drops_the_entry() -> None:
    doc, warnings = migrate(
        {
            "agents": {
                "providers": {
                    "codex": {"command": {"mode": "append", "args": ["--yolo"]}},
                    "claude": {"enabled": False},
                }
            }
        }
    )
    assert doc == {"agents": {"providers": {"claude": {"enabled": False}}}}
    assert paths(warnings) == ["agents.providers.codex.command"]
    assert "agents.providers.codex" in warnings[0].message
    assert_no_value_leaks(warnings, "--yolo")


def test_malformed_legacy_command_is_left_for_validation() -> None:
    raw = {"agents": {"providers": {"claude": {"command": {"mode": "replace", "argv": []}}}}}
    doc, warnings = migrate(raw)
    assert doc == raw
    assert warnings == []


def test_shared_openai_credentials_fold_into_openai_sites() -> None:
    doc, warnings = migrate(
        {
            "providers": {"openai": {"apiKey": SECRET, "baseUrl": "https://shared"}},
            "features": {
                "dictation": {"stt": {"provider": "openai"}},
                "voiceMode": {"tts": {"provider": "openai", "voice": "nova"}},
            },
        }
    )
    assert "providers" not in doc
    assert doc["features"]["dictation"]["stt"] == {
        "provider": "openai",
        "apiKey": SECRET,
        "baseUrl": "https://shared",
    }
    assert doc["features"]["voiceMode"]["tts"] == {
        "provider": "openai",
        "voice": "nova",
        "apiKey": SECRET,
        "baseUrl": "https://shared",
    }
    assert set(paths(warnings)) == {"providers.openai.apiKey", "providers.openai.baseUrl"}
    assert_no_value_leaks(warnings, SECRET, "https://shared")
    PaseoConfig.model_validate(doc)


def test_endpoint_settings_come_before_shared_ones() -> None:
    doc, _ = migrate(
        {
            "providers": {
                "openai": {
                    "apiKey": "shared-key",
                    "baseUrl": "https://shared",
                    "stt": {"apiKey": "stt-key"},
                    "tts": {"baseUrl": "https://tts"},
                }
            },
            "features": {
                "dictation": {"stt": {"provider": "openai"}},
                "voiceMode": {"tts": {"provider": "openai"}},
            },
        }
    )
    assert doc["features"]["dictation"]["stt"] == {
        "provider": "openai",
        "apiKey": "stt-key",
        "baseUrl": "https://shared",
    }
    assert doc["features"]["voiceMode"]["tts"] == {
        "provider": "openai",
        "apiKey": "shared-key",
        "baseUrl": "https://tts",
    }


def test_a_site_keeps_its_own_values() -> None:
    doc, warnings = migrate(
        {
            "providers": {"openai": {"apiKey": SECRET}},
            "features": {"dictation": {"stt": {"provider": "openai", "apiKey": "own"}}},
        }
    )
    assert doc["features"]["dictation"]["stt"]["apiKey"] == "own"
    assert paths(warnings) == ["providers.openai.apiKey"]
    assert "discarded" in warnings[0].message
    assert_no_value_leaks(warnings, SECRET, "own")


def test_legacy_key_without_a_site_is_discarded_with_a_warning() -> None:
    doc, warnings = migrate(
        {
            "providers": {
                "openai": {"apiKey": SECRET, "tts": {"apiKey": SECRET + "-tts"}, "voice": "x"},
                "local": {"modelsDir": "/m", "autoDownload": True},
            },
            # A provider-less site is local, so it receives no OpenAI credentials.
            "features": {"dictation": {"stt": {"model": "parakeet"}}},
        }
    )
    assert doc == {
        "providers": {"local": {"modelsDir": "/m"}},
        "features": {"dictation": {"stt": {"provider": "local", "model": "parakeet"}}},
    }
    assert set(paths(warnings)) == {
        "providers.openai.apiKey",
        "providers.openai.tts.apiKey",
        "providers.openai.voice",
        "providers.local.autoDownload",
    }
    assert all(w.severity == "warning" for w in warnings)
    assert_no_value_leaks(warnings, SECRET)


def test_provider_names_are_lower_cased() -> None:
    doc, _ = migrate({"features": {"voiceMode": {"tts": {"provider": " OpenAI "}}}})
    assert doc["features"]["voiceMode"]["tts"] == {"provider": "openai"}


@pytest.mark.parametrize(
    ("site", "kept", "dropped"),
    [
        (
            {"provider": "local", "model": "m", "language": "en", "apiKey": SECRET},
            {"provider": "local", "model": "m", "language": "en"},
            ["features.dictation.stt.apiKey"],
        ),
        (
            {"provider": "openai", "language": "en", "confidenceThreshold": 1},
            {"provider": "openai", "language": "en", "confidenceThreshold": 1},
            [],
        ),
    ],
)
def test_fields_the_provider_ignores_are_discarded(
    site: dict[str, Any], kept: dict[str, Any], dropped: list[str]
) -> None:
    doc, warnings = migrate({"features": {"dictation": {"stt": site}}})
    assert doc["features"]["dictation"]["stt"] == kept
    assert paths(warnings) == dropped
    assert_no_value_leaks(warnings, SECRET)


def test_tts_speaker_id_is_local_only() -> None:
    doc, warnings = migrate(
        {"features": {"voiceMode": {"tts": {"provider": "openai", "speakerId": 2, "speed": 1}}}}
    )
    assert doc["features"]["voiceMode"]["tts"] == {"provider": "openai", "speed": 1}
    assert paths(warnings) == ["features.voiceMode.tts.speakerId"]


def test_unknown_site_keys_are_left_for_validation() -> None:
    doc, warnings = migrate({"features": {"dictation": {"stt": {"provider": "local", "x": 1}}}})
    assert doc["features"]["dictation"]["stt"] == {"provider": "local", "x": 1}
    assert warnings == []
