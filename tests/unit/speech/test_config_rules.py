"""The speech configuration rules of issue 18 item 2, one test (or more) per rule: loading
(legacy folding, provider-less sites, lower-cased names, discarded fields), reads (``hasApiKey``,
``envOverrides``), patches (replace on a provider change, merge and keep the key otherwise,
``null`` clears) and the round trip of a read a client saves back unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paseo.config import load_config, patch
from paseo.config.load import patch_file
from paseo.config.speech_settings import clean_patch, read_view
from paseo.daemon.reload import REDACTED
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


# --- reads: hasApiKey, envOverrides ------------------------------------------------------------


def test_reads_replace_keys_with_has_api_key() -> None:
    document = {
        "features": {
            "dictation": {"stt": OPENAI_SITE},
            "voiceMode": {
                "stt": {"provider": "openai"},
                "tts": {"provider": "local", "voice": "en-us"},
            },
        }
    }
    view = read_view(document)
    assert view["features"]["dictation"]["stt"] == {
        **{k: v for k, v in OPENAI_SITE.items() if k != "apiKey"},
        "hasApiKey": True,
    }
    assert view["features"]["voiceMode"]["stt"] == {"provider": "openai", "hasApiKey": False}
    # A local site has no key to speak of.
    assert view["features"]["voiceMode"]["tts"] == {"provider": "local", "voice": "en-us"}
    assert document["features"]["dictation"]["stt"]["apiKey"] == "sk-1"  # the input is untouched


def test_env_overrides_name_the_environment_an_openai_site_uses(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    loaded = _load(
        tmp_path,
        {
            "features": {
                "dictation": {"stt": {"provider": "openai"}},
                "voiceMode": {"stt": {"provider": "openai", "apiKey": "sk-own"}},
            }
        },
        env={**env, "PASEO_VOICE_TTS_PROVIDER": "openai"},
    )
    overrides = loaded.env_overrides
    assert overrides["features.dictation.stt.apiKey"] == "OPENAI_API_KEY"
    assert overrides["features.dictation.stt.baseUrl"] == "OPENAI_BASE_URL"
    # Its own key wins over the environment: only the URL comes from there.
    assert "features.voiceMode.stt.apiKey" not in overrides
    assert overrides["features.voiceMode.stt.baseUrl"] == "OPENAI_BASE_URL"
    # A site the environment switched to openai takes its credentials from there too.
    assert overrides["features.voiceMode.tts.provider"] == "PASEO_VOICE_TTS_PROVIDER"
    assert overrides["features.voiceMode.tts.apiKey"] == "OPENAI_API_KEY"
    assert "sk-env" not in json.dumps(overrides)


def test_env_overrides_name_nothing_for_local_sites(tmp_path: Path) -> None:
    loaded = _load(tmp_path, {}, env={"OPENAI_API_KEY": "sk-env"})
    assert not any(path.startswith("features.") for path in loaded.env_overrides)


# --- the round trip of a read saved back ---------------------------------------------------------


def test_a_read_saved_back_keeps_the_stored_key() -> None:
    stored = _with_site(OPENAI_SITE)
    assert patch(stored, clean_patch(read_view(stored), REDACTED)) == stored


def test_a_read_saved_back_with_a_change_keeps_the_key_and_applies_the_change() -> None:
    edited = read_view(_with_site(OPENAI_SITE))
    edited["features"]["dictation"]["stt"]["model"] = "gpt-4o-transcribe"
    result = patch(_with_site(OPENAI_SITE), clean_patch(edited, REDACTED))
    assert _site(result, "features", "dictation", "stt") == {
        **OPENAI_SITE,
        "model": "gpt-4o-transcribe",
    }


def test_a_placeholder_key_keeps_the_stored_key_and_a_new_key_replaces_it() -> None:
    placeholder = _with_site({"provider": "openai", "apiKey": REDACTED})
    kept = patch(_with_site(OPENAI_SITE), clean_patch(placeholder, REDACTED))
    assert _site(kept, "features", "dictation", "stt")["apiKey"] == "sk-1"
    new = patch(_with_site(OPENAI_SITE), clean_patch(_with_site({"apiKey": "sk-2"}), REDACTED))
    assert _site(new, "features", "dictation", "stt")["apiKey"] == "sk-2"
    cleared = patch(_with_site(OPENAI_SITE), clean_patch(_with_site({"apiKey": None}), REDACTED))
    assert "apiKey" not in _site(cleared, "features", "dictation", "stt")


def test_a_read_of_a_switched_site_saved_back_discards_the_old_key(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_with_site(OPENAI_SITE)))
    edited = read_view(_with_site(OPENAI_SITE))
    edited["features"]["dictation"]["stt"] = {"provider": "local", "language": "en"}
    written = patch_file(path, clean_patch(edited, REDACTED))
    assert _site(written.document, "features", "dictation", "stt") == {
        "provider": "local",
        "language": "en",
    }
    assert "sk-1" not in path.read_text()


def test_a_legacy_file_read_and_saved_back_keeps_its_folded_key(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    legacy = {
        "providers": {"openai": {"apiKey": "sk-legacy", "tts": {"baseUrl": "http://tts/v1"}}},
        "features": {
            "dictation": {"stt": {"provider": "OpenAI"}},
            "voiceMode": {"tts": {"provider": "openai", "voice": "nova"}},
        },
    }
    path.write_text(json.dumps(legacy))
    loaded = load_config(path, env={}, home=tmp_path)
    read = read_view(loaded.document)
    assert read["features"]["dictation"]["stt"] == {"provider": "openai", "hasApiKey": True}
    written = patch_file(path, clean_patch(read, REDACTED))
    features = written.document["features"]
    # The next save writes only the inline shape, every folded value kept.
    assert features["dictation"]["stt"] == {"provider": "openai", "apiKey": "sk-legacy"}
    assert features["voiceMode"]["tts"] == {
        "provider": "openai",
        "voice": "nova",
        "apiKey": "sk-legacy",
        "baseUrl": "http://tts/v1",
    }
    assert "providers" not in json.loads(path.read_text())


ROUND_TRIPS = {
    "legacy shared key": {
        "providers": {"openai": {"apiKey": "sk-a", "stt": {"baseUrl": "http://stt/v1"}}},
        "features": {"voiceMode": {"stt": {"provider": "openai"}}},
    },
    "legacy key with no site": {"providers": {"openai": {"apiKey": "sk-b"}}},
    "provider-less site": {"features": {"voiceMode": {"tts": {"voice": "en-us"}}}},
    "upper-case provider": {"features": {"dictation": {"stt": {"provider": "OPENAI"}}}},
    "foreign fields": {
        "features": {"dictation": {"stt": {"provider": "local", "apiKey": "sk-c", "model": "m"}}}
    },
    "language on both variants": {
        "features": {
            "dictation": {"stt": {"provider": "local", "language": "de"}},
            "voiceMode": {"stt": {"provider": "openai", "language": "fr", "apiKey": "sk-d"}},
        }
    },
}


@pytest.mark.parametrize("document", ROUND_TRIPS.values(), ids=list(ROUND_TRIPS))
def test_every_rule_survives_a_read_saved_back(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document))
    first = load_config(path, env={}, home=tmp_path)
    patch_file(path, clean_patch(read_view(first.document), REDACTED))
    second = load_config(path, env={}, home=tmp_path)
    # What the daemon runs with is unchanged, and the file now holds only the inline shape.
    assert second.resolved == first.resolved
    assert second.document == first.document
    assert json.loads(path.read_text()) == first.document
    assert not [w for w in second.warnings if w.severity == "warning"]


def test_reads_over_rpc_say_has_api_key_and_a_saved_back_read_keeps_the_key(
    tmp_path: Path,
) -> None:
    from helpers.daemon_rpc import kill_leftover, start_daemon, stop_daemon

    from paseo.client.sync import SyncClient

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps(_with_site(OPENAI_SITE)))
    live = start_daemon(home, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    try:
        with SyncClient(live.url, home=home) as client:
            answer = client.call("config.get", {})
            saved = client.call(
                "config.patch", {"patch": {"features": answer["config"]["features"]}}
            )
            again = client.call("config.get", {"path": "features.dictation.stt"})
    finally:
        stop_daemon(home)
        kill_leftover(live.pid)
    site = answer["config"]["features"]["dictation"]["stt"]
    assert site["hasApiKey"] is True
    assert answer["resolved"]["features"]["dictation"]["stt"]["hasApiKey"] is True
    assert answer["envOverrides"]["features.dictation.stt.baseUrl"] == "OPENAI_BASE_URL"
    assert "sk-1" not in json.dumps([answer, saved, again])
    assert saved["config"]["features"]["dictation"]["stt"]["hasApiKey"] is True
    assert again["config"] == site
    assert json.loads((home / "config.json").read_text())["features"]["dictation"]["stt"] == (
        OPENAI_SITE
    )
