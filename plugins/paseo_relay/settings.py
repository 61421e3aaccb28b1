"""The relay settings as ``paseo daemon pair`` resolves them without the daemon, by the
TypeScript Paseo's rules (``srv/config.ts`` ``resolveRelayConfig``) with this daemon's default:

- ``enabled``: ``PASEO_RELAY_ENABLED``, then ``daemon.relay.enabled``, else **false**;
- ``endpoint``: ``PASEO_RELAY_ENDPOINT``, then ``daemon.relay.endpoint``, else
  ``relay.paseo.sh:443``;
- ``publicEndpoint`` (what offers advertise): ``PASEO_RELAY_PUBLIC_ENDPOINT``, then
  ``daemon.relay.publicEndpoint``, else the endpoint;
- the app's base URL: ``PASEO_APP_BASE_URL``, then ``app.baseUrl``, else
  ``https://app.paseo.sh``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paseo_relay.offer import DEFAULT_APP_BASE_URL, HOSTED_RELAY

_TRUE = frozenset({"1", "true", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "no", "n", "off"})


class SettingsError(Exception):
    """``config.json`` cannot be read."""


@dataclass(frozen=True)
class PairSettings:
    enabled: bool
    endpoint: str
    public_endpoint: str
    app_base_url: str


def _flag(text: str | None) -> bool | None:
    if text is None:
        return None
    lowered = text.strip().lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _section(document: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    node: Any = document
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def read_settings(home: Path, env: Mapping[str, str]) -> PairSettings:
    path = home / "config.json"
    try:
        document: Any = json.loads(path.read_bytes())
    except FileNotFoundError:
        document = {}
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path} cannot be read: {exc}") from None
    if not isinstance(document, Mapping):
        raise SettingsError(f"{path} is not a JSON object")
    relay = _section(document, "daemon", "relay")
    app = _section(document, "app")
    enabled = _flag(env.get("PASEO_RELAY_ENABLED"))
    if enabled is None:
        configured = relay.get("enabled")
        enabled = configured if isinstance(configured, bool) else False
    endpoint = (
        _text(env.get("PASEO_RELAY_ENDPOINT")) or _text(relay.get("endpoint")) or HOSTED_RELAY
    )
    public = (
        _text(env.get("PASEO_RELAY_PUBLIC_ENDPOINT"))
        or _text(relay.get("publicEndpoint"))
        or endpoint
    )
    base = _text(env.get("PASEO_APP_BASE_URL")) or _text(app.get("baseUrl")) or DEFAULT_APP_BASE_URL
    return PairSettings(enabled, endpoint, public, base)
