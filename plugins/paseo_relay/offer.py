"""The pairing offer (``shared/connection-offer.ts``, ``server/connection-offer.ts``):
``{v:2, serverId, daemonPublicKeyB64, relay:{endpoint}}`` as compact JSON, base64url without
padding after ``#offer=`` on the app's base URL. The key order is the TypeScript one, so our
offers are byte for byte what its daemon prints for the same identity.

Whoever holds an offer can reach the daemon through the relay: the daemon's public key in it is
the credential (there is no password over the relay). Treat the URL as a secret.

Also the relay URLs both ends dial (``shared/daemon-endpoints.ts``): ``wss`` for the hosted
relay (exactly ``relay.paseo.sh:443``), as the TypeScript clients decide; and, for our clients
only, for any endpoint on port 443 (a self-hosted relay behind a TLS proxy, docs/relay.md).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from paseo_hookspecs.address import AddressError, parse_address

OFFER_MARKER = "#offer="
DEFAULT_APP_BASE_URL = "https://app.paseo.sh"
HOSTED_RELAY = "relay.paseo.sh:443"
KEY_BYTES = 32


class OfferError(ValueError):
    """An offer URL that does not hold a usable v2 offer."""


@dataclass(frozen=True)
class Offer:
    server_id: str
    daemon_public_key_b64: str
    endpoint: str
    """The relay's ``host:port`` (its public endpoint)."""

    def document(self) -> dict[str, Any]:
        return {
            "v": 2,
            "serverId": self.server_id,
            "daemonPublicKeyB64": self.daemon_public_key_b64,
            "relay": {"endpoint": self.endpoint},
        }


def encode_offer_url(offer: Offer, app_base_url: str = DEFAULT_APP_BASE_URL) -> str:
    """``<app base URL without trailing />/#offer=<base64url(JSON)>``."""
    text = json.dumps(offer.document(), separators=(",", ":"), ensure_ascii=False)
    fragment = base64.urlsafe_b64encode(text.encode("utf-8")).rstrip(b"=").decode("ascii")
    return f"{app_base_url.rstrip('/')}/{OFFER_MARKER}{fragment}"


def is_offer_url(text: str) -> bool:
    """Whether a ``--host`` value is an offer URL (it carries ``#offer=``)."""
    return OFFER_MARKER in text


def parse_offer_url(text: str) -> Offer:
    """The offer after the first ``#offer=`` (padded or not); :class:`OfferError` otherwise."""
    _, marker, encoded = text.strip().partition(OFFER_MARKER)
    if not marker or not encoded:
        raise OfferError("no #offer= fragment in the URL")
    padded = encoded.strip() + "=" * (-len(encoded.strip()) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        raise OfferError("the #offer= fragment is not base64url JSON") from None
    if not isinstance(data, dict) or data.get("v") != 2:
        raise OfferError("not a v2 connection offer")
    server_id = data.get("serverId")
    key = data.get("daemonPublicKeyB64")
    relay = data.get("relay")
    endpoint = relay.get("endpoint") if isinstance(relay, dict) else None
    if not isinstance(server_id, str) or not server_id.strip():
        raise OfferError("the offer has no serverId")
    if not isinstance(key, str) or not key.strip():
        raise OfferError("the offer has no daemonPublicKeyB64")
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise OfferError("the offer has no relay endpoint")
    try:
        raw_key = base64.b64decode(key.replace("-", "+").replace("_", "/") + "=" * (-len(key) % 4))
    except binascii.Error:
        raw_key = b""
    if len(raw_key) != KEY_BYTES:
        raise OfferError("the offer's daemon key is not a 32-byte key")
    _host_port(endpoint)
    return Offer(server_id.strip(), key.strip(), endpoint.strip())


def _host_port(endpoint: str) -> tuple[str, int]:
    try:
        address = parse_address(endpoint)
    except AddressError as exc:
        raise OfferError(f"bad relay endpoint {endpoint!r}: {exc}") from None
    if address.host is None or address.port is None or address.port == 0:
        raise OfferError(f"bad relay endpoint {endpoint!r}: expected host:port")
    return address.host, address.port


def uses_tls(endpoint: str) -> bool:
    host, port = _host_port(endpoint)
    return port == 443 or f"{host.lower()}:{port}" == HOSTED_RELAY


def relay_ws_url(endpoint: str, server_id: str, role: str, connection_id: str | None = None) -> str:
    """``ws[s]://host:port/ws?serverId=…&role=…&v=2[&connectionId=…]``."""
    host, port = _host_port(endpoint)
    shown = f"[{host}]" if ":" in host else host
    query = {"serverId": server_id, "role": role, "v": "2"}
    if connection_id:
        query["connectionId"] = connection_id
    scheme = "wss" if uses_tls(endpoint) else "ws"
    return f"{scheme}://{shown}:{port}/ws?{urlencode(query)}"
