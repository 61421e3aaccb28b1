"""The speech configuration rules of issue 18 item 2, against the existing config API.

Rules the current config code does not satisfy are listed in the speech helper's report, not
here (see docs/speech.md, "Configuration").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paseo.config import load_config, patch
from paseo.config.load import patch_file
from paseo.speech.engines import site_settings


def _load(tmp_path: Path, document: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document))
    return load_config(path, env=env or {}, home=tmp_path)


def _site(document: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        document = document[key]
    return document


@pytest.mark.parametrize("provider", ["local", "openai"])
def test_both_stt_variants_carry_language(tmp_path: Path, provider: str) -> None:
    loaded = _load(
        tmp_path, {"features": {"dictation": {"stt": {"provider": provider, "language": "fr"}}}}
    )
    assert loaded.resolved.features.dictation.stt.language == "fr"
    assert site_settings(loaded.resolved, "dictation")["language"] == "fr"


def test_a_site_without_provider_is_local(tmp_path: Path) -> None:
    loaded = _load(tmp_path, {"features": {"voiceMode": {"tts": {"voice": "en-us"}}}})
    assert _site(loaded.document, "features", "voiceMode", "tts") == {
        "provider": "local",
        "voice": "en-us",
    }
    assert site_settings(loaded.resolved, "voiceMode.tts")["provider"] == "local"


def test_provider_names_are_trimmed_and_lower_cased(tmp_path: Path) -> None:
    loaded = _load(tmp_path, {"features": {"dictation": {"stt": {"provider": " OpenAI "}}}})
    assert loaded.resolved.features.dictation.stt.provider == "openai"


def test_fields_the_provider_ignores_are_discarded(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        {
            "features": {
                "dictation": {
                    "stt": {"provider": "local", "apiKey": "sk-secret", "baseUrl": "http://x"}
                }
            }
        },
    )
    assert _site(loaded.document, "features", "dictation", "stt") == {"provider": "local"}
    paths = {w.path for w in loaded.warnings}
    assert {"features.dictation.stt.apiKey", "features.dictation.stt.baseUrl"} <= paths
    assert not any("sk-secret" in str(w) for w in loaded.warnings)


def test_legacy_openai_settings_fold_into_openai_sites_endpoint_first(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        {
            "providers": {
                "openai": {
                    "apiKey": "sk-shared",
                    "baseUrl": "http://shared/v1",
                    "stt": {"apiKey": "sk-stt"},
                }
            },
            "features": {
                "dictation": {"stt": {"provider": "openai"}},
                "voiceMode": {
                    "stt": {"provider": "openai", "apiKey": "sk-own"},
                    "tts": {"provider": "openai"},
                },
            },
        },
    )
    features = loaded.document["features"]
    assert features["dictation"]["stt"] == {
        "provider": "openai",
        "apiKey": "sk-stt",
        "baseUrl": "http://shared/v1",
    }
    # A site with its own key keeps it; it still lacks a URL, so it receives the shared one.
    assert features["voiceMode"]["stt"]["apiKey"] == "sk-own"
    assert features["voiceMode"]["tts"]["apiKey"] == "sk-shared"
    assert "openai" not in loaded.document.get("providers", {})


def test_legacy_openai_settings_do_not_reach_local_sites(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        {
            "providers": {"openai": {"apiKey": "sk-orphan"}},
            "features": {"dictation": {"stt": {"provider": "local"}}},
        },
    )
    assert _site(loaded.document, "features", "dictation", "stt") == {"provider": "local"}


def test_a_legacy_key_with_no_site_is_discarded_with_a_warning_naming_its_path(
    tmp_path: Path,
) -> None:
    loaded = _load(tmp_path, {"providers": {"openai": {"apiKey": "sk-orphan-value"}}})
    warning = next(w for w in loaded.warnings if w.path == "providers.openai.apiKey")
    assert "discarded" in warning.message
    assert not any("sk-orphan-value" in str(w) for w in loaded.warnings)
    assert "openai" not in json.dumps(loaded.document)


def test_environment_sources_are_reported_in_env_overrides(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        {"features": {"dictation": {"stt": {"provider": "local"}}}},
        env={"PASEO_DICTATION_STT_PROVIDER": "openai", "PASEO_LOCAL_MODELS_DIR": "m"},
    )
    assert loaded.resolved.features.dictation.stt.provider == "openai"
    assert loaded.env_overrides["features.dictation.stt.provider"] == (
        "PASEO_DICTATION_STT_PROVIDER"
    )
    assert loaded.env_overrides["providers.local.modelsDir"] == "PASEO_LOCAL_MODELS_DIR"
    assert site_settings(loaded.resolved, "dictation")["modelsDir"] == str(tmp_path / "m")


OPENAI_SITE = {"provider": "openai", "apiKey": "sk-1", "model": "whisper-1", "language": "en"}


def _with_site(site: dict[str, Any]) -> dict[str, Any]:
    return {"features": {"dictation": {"stt": site}}}


def test_a_patch_changing_provider_replaces_the_whole_site() -> None:
    result = patch(_with_site(OPENAI_SITE), _with_site({"provider": "local", "model": "cmds"}))
    assert _site(result, "features", "dictation", "stt") == {"provider": "local", "model": "cmds"}


def test_a_patch_with_the_same_or_no_provider_merges_and_keeps_the_key() -> None:
    same = patch(_with_site(OPENAI_SITE), _with_site({"provider": "openai", "model": "m2"}))
    assert _site(same, "features", "dictation", "stt") == {**OPENAI_SITE, "model": "m2"}
    omitted = patch(_with_site(OPENAI_SITE), _with_site({"language": "de"}))
    assert _site(omitted, "features", "dictation", "stt") == {**OPENAI_SITE, "language": "de"}


def test_null_clears_a_value() -> None:
    result = patch(_with_site(OPENAI_SITE), _with_site({"language": None}))
    assert "language" not in _site(result, "features", "dictation", "stt")


def test_switching_providers_and_back_discards_the_old_credentials(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_with_site(OPENAI_SITE)))
    patch_file(path, _with_site({"provider": "local"}))
    written = patch_file(path, _with_site({"provider": "openai"}))
    assert _site(written.document, "features", "dictation", "stt") == {"provider": "openai"}
    assert "sk-1" not in path.read_text()


def test_reads_over_rpc_never_return_the_key(tmp_path: Path) -> None:
    from helpers.daemon_rpc import kill_leftover, start_daemon, stop_daemon

    from paseo.client.sync import SyncClient

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps(_with_site(OPENAI_SITE)))
    live = start_daemon(home)
    try:
        with SyncClient(live.url, home=home) as client:
            answer = client.call("config.get", {"path": "features.dictation.stt"})
    finally:
        stop_daemon(home)
        kill_leftover(live.pid)
    assert answer["config"]["provider"] == "openai"
    assert "sk-1" not in json.dumps(answer)
