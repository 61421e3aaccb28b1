"""The speech sites as clients read and write them over the wire.

A read never carries an OpenAI key: each speech site's ``apiKey`` is replaced by
``hasApiKey`` (whether ``config.json`` holds one; a key the daemon takes from its environment
is reported in ``envOverrides`` instead). A client that re-saves what it read sends
``hasApiKey`` back, perhaps a redaction placeholder where a secret was: :func:`clean_patch`
drops both, so the write-only key stays as stored (a patch with the same or no provider merges).
Sending a new ``apiKey`` replaces it, ``apiKey: null`` clears it, and changing the provider
replaces the whole site (the old variant's credentials go with it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from paseo.config.sites import SPEECH_SITES

HAS_API_KEY = "hasApiKey"


def _site(document: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    current: Any = document
    for key in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current if isinstance(current, dict) else None


def read_view(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` (a config file or the effective config) whose OpenAI speech sites
    say ``hasApiKey`` instead of holding their key."""
    view: dict[str, Any] = copy.deepcopy(dict(document))
    for path, kind in SPEECH_SITES.items():
        site = _site(view, path)
        if site is None or kind == "turnDetection":
            continue
        key = site.pop("apiKey", None)
        if site.get("provider") == "openai" or key is not None:
            site[HAS_API_KEY] = isinstance(key, str) and bool(key)
    return view


def clean_patch(patch: Mapping[str, Any], placeholder: str) -> dict[str, Any]:
    """``patch`` without what a re-saved read carries back: ``hasApiKey`` and an ``apiKey``
    equal to the redaction ``placeholder`` (the stored key is kept).

    Only the objects on the way to a speech site are copied: the rest is handed on as it came,
    so the write path's own limits (depth, size) judge it."""
    cleaned: dict[str, Any] = dict(patch)
    for path in SPEECH_SITES:
        parent: dict[str, Any] = cleaned
        for key in path[:-1]:
            child = parent.get(key)
            if not isinstance(child, Mapping):
                break
            parent[key] = parent = dict(child)
        else:
            site = parent.get(path[-1])
            if not isinstance(site, Mapping):
                continue
            site = parent[path[-1]] = dict(site)
            site.pop(HAS_API_KEY, None)
            if site.get("apiKey") == placeholder:
                del site["apiKey"]
    return cleaned
