"""Older ``config.json`` shapes, rewritten into the current one on the raw JSON document.

Migration runs before validation, on plain dicts: it takes the document as read and returns a
new document plus warnings; the input is never modified. Nothing here writes the file. The
migrated form reaches disk only when something else saves the config, so the next save writes
the current shape and nothing else.

Warnings name JSON paths and never values: a legacy key may hold an API key.

What is migrated:

* ``daemon.allowedHosts`` became ``daemon.hostnames`` (``hostnames`` wins if both exist).
* ``agents.providers.<id>.command`` used to be ``{mode: "default" | "append" | "replace"}``;
  it is now the replacement argv itself. ``replace`` keeps its argv, ``default`` drops the
  command, and ``append`` has no current equivalent, so that provider entry is dropped whole
  (as other Paseo implementations do) rather than launch with half of its intent.
* ``providers.openai`` held OpenAI speech credentials and URLs shared by every use site, with
  per-endpoint ``stt``/``tts`` overrides. Each OpenAI speech site now carries its own, so the
  legacy values are folded into OpenAI sites lacking their own, the endpoint-specific value
  before the shared one. ``providers.openai.voice`` and ``providers.local.autoDownload`` are
  gone.
* Speech sites: provider names are trimmed and lower-cased, a site without a provider is a
  local one, and keys only the other provider understands are dropped.
* Settings that moved into a plugin's own section (:data:`MOVED_SECTIONS`): ``daemon.mcp``
  became ``plugins.mcp.settings``, and ``agents.providers.<id>.paseoTools`` its
  ``providers.<id>``. A value already at the new place wins. :func:`migrate_moved` runs again
  on every written document, so a change made at the old path is written at the new one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypeGuard

from paseo.config.jsonpath import format_path
from paseo.config.problems import ConfigProblem
from paseo.config.sites import SPEECH_SITE_FIELDS, SPEECH_SITES

# Legacy OpenAI keys each kind of speech site draws on, most specific first.
_OPENAI_SOURCES: dict[str, tuple[str, ...]] = {"stt": ("stt",), "tts": ("tts",)}
_OPENAI_FIELDS = ("apiKey", "baseUrl")


def migrate(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[ConfigProblem]]:
    """Rewrite every legacy form in ``raw``; returns ``(document, warnings)``."""
    doc: dict[str, Any] = copy.deepcopy(dict(raw))
    warnings: list[ConfigProblem] = []
    _migrate_allowed_hosts(doc, warnings)
    _migrate_provider_commands(doc, warnings)
    legacy_openai = _take_legacy_speech_providers(doc, warnings)
    normalize_speech_sites(doc, warnings, discard_foreign=True)
    _fold_legacy_openai(doc, legacy_openai, warnings)
    migrate_moved(doc, warnings)
    return doc, warnings


MOVED_SECTIONS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("daemon", "mcp"), ("plugins", "mcp", "settings")),
)
"""Objects that moved whole: old path → new path (a plugin's ``settings``)."""

MOVED_PROVIDER_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("paseoTools", ("plugins", "mcp", "settings", "providers")),
)
"""``agents.providers.<id>.<key>`` → ``<new path>.<id>``."""


def _merge_under(
    doc: dict[str, Any], path: tuple[str, ...], value: dict[str, Any], *, old_wins: bool
) -> None:
    """Put ``value``'s keys at ``path``; what is already there wins unless ``old_wins``."""
    current = doc
    for key in path:
        child = current.get(key)
        if not isinstance(child, dict):
            child = current[key] = {}
        current = child
    for key, item in value.items():
        if old_wins:
            current[key] = item
        else:
            current.setdefault(key, item)


def migrate_moved(
    doc: dict[str, Any], warnings: list[ConfigProblem], *, old_wins: bool = False
) -> None:
    """Move the settings of :data:`MOVED_SECTIONS` and :data:`MOVED_PROVIDER_KEYS` (in place).
    ``old_wins``: the old path holds a change just made there (a write), not a stale value."""
    for old, new in MOVED_SECTIONS:
        parent = _dict_at(doc, *old[:-1])
        if parent is None or old[-1] not in parent:
            continue
        value = parent.pop(old[-1])
        if isinstance(value, dict):
            _merge_under(doc, new, value, old_wins=old_wins)
            _warn(warnings, format_path(old), f"migrated to {format_path(new)}")
        else:
            _warn(warnings, format_path(old), "discarded (not an object)")
    providers = _dict_at(doc, "agents", "providers")
    for provider_id, entry in (providers or {}).items():
        if not isinstance(entry, dict):
            continue
        for key, new in MOVED_PROVIDER_KEYS:
            if key not in entry:
                continue
            value = entry.pop(key)
            where = format_path(("agents", "providers", provider_id, key))
            if isinstance(value, dict):
                _merge_under(doc, (*new, provider_id), value, old_wins=old_wins)
                _warn(warnings, where, f"migrated to {format_path((*new, provider_id))}")
            else:
                _warn(warnings, where, "discarded (not an object)")


def _warn(warnings: list[ConfigProblem], path: str, message: str) -> None:
    warnings.append(ConfigProblem(path, message, "warning"))


def _dict_at(doc: Mapping[str, Any], *keys: str) -> dict[str, Any] | None:
    current: Any = doc
    for key in keys:
        if not isinstance(current, dict):
            return None
        current = current.get(key)
    return current if isinstance(current, dict) else None


def _migrate_allowed_hosts(doc: dict[str, Any], warnings: list[ConfigProblem]) -> None:
    daemon = _dict_at(doc, "daemon")
    if daemon is None or "allowedHosts" not in daemon:
        return
    legacy = daemon.pop("allowedHosts")
    if "hostnames" in daemon:
        _warn(warnings, "daemon.allowedHosts", "discarded; daemon.hostnames takes precedence")
    else:
        daemon["hostnames"] = legacy
        _warn(warnings, "daemon.allowedHosts", "migrated to daemon.hostnames")


def _legacy_command(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, dict) and isinstance(command.get("mode"), str):
            return command
    return None


def _migrate_provider_commands(doc: dict[str, Any], warnings: list[ConfigProblem]) -> None:
    providers = _dict_at(doc, "agents", "providers")
    if providers is None:
        return
    for provider_id in list(providers):
        entry = providers[provider_id]
        command = _legacy_command(entry)
        if command is None:
            continue
        path = format_path(("agents", "providers", provider_id, "command"))
        mode = command["mode"]
        argv = command.get("argv")
        if mode == "default" and set(command) == {"mode"}:
            del entry["command"]
            _warn(warnings, path, "legacy default mode migrated (command removed)")
        elif mode == "replace" and set(command) == {"mode", "argv"} and _is_argv(argv):
            entry["command"] = list(argv)
            _warn(warnings, path, "legacy replace mode migrated to an argv list")
        elif mode == "append" and set(command) <= {"mode", "args"}:
            # Appending to the default binary cannot be expressed any more; launching without
            # the extra arguments would silently change behaviour, so the entry goes.
            del providers[provider_id]
            _warn(
                warnings,
                path,
                "legacy append mode is no longer supported; "
                f"{format_path(('agents', 'providers', provider_id))} was discarded",
            )
        # Anything else is malformed, not legacy: leave it for validation to report.


def _is_argv(value: Any) -> TypeGuard[list[str]]:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(item, str) and item for item in value)
    )


def _take_legacy_speech_providers(
    doc: dict[str, Any], warnings: list[ConfigProblem]
) -> dict[str, str]:
    """Remove the legacy speech keys under ``providers``; returns the OpenAI ones, flattened.

    The returned keys are JSON paths below ``providers.openai`` (``apiKey``, ``stt.baseUrl``);
    the folding step uses them and reports those no site received.
    """
    providers = _dict_at(doc, "providers")
    if providers is None:
        return {}
    local = providers.get("local")
    if isinstance(local, dict) and "autoDownload" in local:
        del local["autoDownload"]
        _warn(warnings, "providers.local.autoDownload", "discarded; no longer supported")
    if "openai" not in providers:
        return {}
    openai = providers.pop("openai")
    if not providers:
        del doc["providers"]
    found: dict[str, str] = {}
    if not isinstance(openai, dict):
        _warn(warnings, "providers.openai", "discarded; expected an object")
        return found
    for key, value in openai.items():
        if key in _OPENAI_FIELDS:
            _keep_setting(found, key, value, warnings)
        elif key in ("stt", "tts") and isinstance(value, dict):
            for sub_key, sub_value in value.items():
                if sub_key in _OPENAI_FIELDS:
                    _keep_setting(found, f"{key}.{sub_key}", sub_value, warnings)
                else:
                    _warn(
                        warnings,
                        format_path(("providers", "openai", key, sub_key)),
                        "discarded; unknown key",
                    )
        else:
            _warn(
                warnings,
                format_path(("providers", "openai", key)),
                "discarded; no longer supported",
            )
    return found


def _keep_setting(
    found: dict[str, str], key: str, value: Any, warnings: list[ConfigProblem]
) -> None:
    if isinstance(value, str) and value.strip():
        found[key] = value.strip()
    else:
        _warn(warnings, f"providers.openai.{key}", "discarded; expected a non-empty string")


def normalize_speech_sites(
    doc: dict[str, Any], warnings: list[ConfigProblem], *, discard_foreign: bool
) -> None:
    """Canonicalise every speech site of ``doc`` in place.

    Provider names are trimmed and lower-cased and a provider-less site becomes ``local``.
    With ``discard_foreign``, keys that only the other provider's variant accepts are dropped
    (a local site keeps no ``apiKey``); keys neither variant knows are left for validation.
    """
    for site_path, kind in SPEECH_SITES.items():
        site = _dict_at(doc, *site_path)
        if site is None:
            continue
        provider = site.get("provider")
        if provider is None:
            site["provider"] = "local"
        elif isinstance(provider, str):
            site["provider"] = provider.strip().lower()
        variants = SPEECH_SITE_FIELDS[kind]
        provider = site["provider"]
        selected = variants.get(provider) if isinstance(provider, str) else None
        if selected is None or not discard_foreign:
            continue
        foreign = frozenset().union(*variants.values()) - selected
        for key in [key for key in site if key in foreign]:
            del site[key]
            _warn(
                warnings,
                format_path((*site_path, key)),
                f"discarded; not used by the {provider} provider",
            )


def _fold_legacy_openai(
    doc: dict[str, Any], legacy: dict[str, str], warnings: list[ConfigProblem]
) -> None:
    used: set[str] = set()
    for site_path, kind in SPEECH_SITES.items():
        sources = _OPENAI_SOURCES.get(kind)
        site = _dict_at(doc, *site_path)
        if sources is None or site is None or site.get("provider") != "openai":
            continue
        for field in _OPENAI_FIELDS:
            if field in site:
                continue
            # Endpoint-specific settings before the shared one.
            for key in (*(f"{source}.{field}" for source in sources), field):
                if key in legacy:
                    site[field] = legacy[key]
                    used.add(key)
                    _warn(
                        warnings,
                        f"providers.openai.{key}",
                        f"migrated to {format_path((*site_path, field))}",
                    )
                    break
    for key in legacy:
        if key not in used:
            _warn(warnings, f"providers.openai.{key}", "discarded; no OpenAI speech site needs it")
