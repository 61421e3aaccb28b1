"""The pairing offer and ``paseo daemon pair``: local only, this home's identity, the
TypeScript CLI's output shapes, ``--rotate``."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from paseo_relay.offer import (
    Offer,
    OfferError,
    encode_offer_url,
    parse_offer_url,
    relay_ws_url,
    uses_tls,
)

KEY = "B6N8vBQgk8i3VdwbEOhstCY3StFqqFPtC9/AsrhtHHw="
# node: "https://app.paseo.sh/#offer=" + Buffer.from(JSON.stringify(offer)).toString("base64url")
TS_URL = (
    "https://app.paseo.sh/#offer=eyJ2IjoyLCJzZXJ2ZXJJZCI6InNydl9hYmMiLCJkYWVtb25QdWJsaWNLZXlCNjQi"
    "OiJCNk44dkJRZ2s4aTNWZHdiRU9oc3RDWTNTdEZxcUZQdEM5L0Fzcmh0SEh3PSIsInJlbGF5Ijp7ImVuZHBvaW50Ijoi"
    "MTI3LjAuMC4xOjg3ODcifX0"
)


def test_an_offer_url_is_byte_for_byte_the_typescript_one() -> None:
    offer = Offer("srv_abc", KEY, "127.0.0.1:8787")
    assert encode_offer_url(offer, "https://app.paseo.sh/") == TS_URL
    assert parse_offer_url(TS_URL) == offer
    # Padded input and unknown keys are accepted, as the TypeScript parser does.
    fragment = TS_URL.split("#offer=", 1)[1]
    assert parse_offer_url(f"x#offer={fragment}{'=' * (-len(fragment) % 4)}") == offer
    extra = {**offer.document(), "label": "laptop"}
    encoded = base64.urlsafe_b64encode(json.dumps(extra).encode()).decode()
    assert parse_offer_url(f"https://a/#offer={encoded}") == offer


@pytest.mark.parametrize(
    "document",
    [
        {"v": 1, "serverId": "s", "daemonPublicKeyB64": KEY, "relay": {"endpoint": "h:1"}},
        {"v": 2, "daemonPublicKeyB64": KEY, "relay": {"endpoint": "h:1"}},
        {"v": 2, "serverId": "s", "relay": {"endpoint": "h:1"}},
        {"v": 2, "serverId": "s", "daemonPublicKeyB64": "AAAA", "relay": {"endpoint": "h:1"}},
        {"v": 2, "serverId": "s", "daemonPublicKeyB64": KEY},
        {"v": 2, "serverId": "s", "daemonPublicKeyB64": KEY, "relay": {"endpoint": "nope"}},
        [1, 2],
    ],
)
def test_an_unusable_offer_is_refused(document: object) -> None:
    encoded = base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")
    with pytest.raises(OfferError):
        parse_offer_url(f"https://app.paseo.sh/#offer={encoded}")


def test_garbage_after_the_marker_is_refused() -> None:
    for text in ("https://app.paseo.sh/", "https://app.paseo.sh/#offer=", "#offer=!!!!"):
        with pytest.raises(OfferError):
            parse_offer_url(text)


def test_relay_urls_use_tls_for_the_hosted_relay_and_port_443() -> None:
    assert relay_ws_url("relay.paseo.sh:443", "srv_a", "client") == (
        "wss://relay.paseo.sh:443/ws?serverId=srv_a&role=client&v=2"
    )
    assert relay_ws_url("127.0.0.1:8787", "srv_a", "server", "conn_1") == (
        "ws://127.0.0.1:8787/ws?serverId=srv_a&role=server&v=2&connectionId=conn_1"
    )
    assert uses_tls("relay.example.org:443")
    assert not uses_tls("[::1]:8787")


def _pair(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    full = {**os.environ, "PASEO_HOME": str(home), **env}
    return subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "pair", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full,
        check=False,
    )


def _enable(home: Path, endpoint: str = "127.0.0.1:8787", **relay: object) -> None:
    home.mkdir(parents=True, exist_ok=True)
    document = {"daemon": {"relay": {"enabled": True, "endpoint": endpoint, **relay}}}
    (home / "config.json").write_text(json.dumps(document), encoding="utf-8")


def test_a_disabled_relay_pairs_nothing(paseo_home: Path) -> None:
    result = _pair(paseo_home, "--json")
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == "Relay pairing is disabled for this daemon config."
    assert result.stdout == ""
    assert not (paseo_home / "daemon-keypair.json").exists()


def test_pair_json_gives_this_homes_server_id_and_key(paseo_home: Path) -> None:
    _enable(paseo_home, publicEndpoint="relay.example.org:443")
    result = _pair(paseo_home, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        '{\n  "relayEnabled": true,\n  "url": "https://app.paseo.sh/#offer='
    )
    document = json.loads(result.stdout)
    assert set(document) == {"relayEnabled", "url", "qr"}
    assert "█" in document["qr"]
    offer = parse_offer_url(document["url"])
    keypair = json.loads((paseo_home / "daemon-keypair.json").read_text(encoding="utf-8"))
    assert set(keypair) == {"v", "publicKeyB64", "secretKeyB64"}
    assert offer.daemon_public_key_b64 == keypair["publicKeyB64"]
    assert offer.server_id == (paseo_home / "server-id").read_text(encoding="utf-8").strip()
    # The offer advertises the public endpoint; the daemon dials the endpoint.
    assert offer.endpoint == "relay.example.org:443"
    assert stat.S_IMODE((paseo_home / "daemon-keypair.json").stat().st_mode) == 0o600
    # A second run is the same offer.
    assert json.loads(_pair(paseo_home, "--json").stdout)["url"] == document["url"]


def test_pair_reads_the_identity_the_daemon_wrote(paseo_home: Path) -> None:
    from paseo.home import meta
    from paseo.home.paths import HomeLayout

    layout = HomeLayout(paseo_home)
    paseo_home.mkdir(parents=True)
    server_id = meta.load_or_create_server_id(layout, {})
    keypair = meta.load_or_create_keypair(layout)
    _enable(paseo_home)
    offer = parse_offer_url(json.loads(_pair(paseo_home, "--json").stdout)["url"])
    assert (offer.server_id, offer.daemon_public_key_b64) == (server_id, keypair.public_key_b64)
    # ... and what pair writes, the daemon reads back unchanged.
    fresh = paseo_home.parent / "fresh-home"
    _enable(fresh)
    offer = parse_offer_url(json.loads(_pair(fresh, "--json").stdout)["url"])
    layout = HomeLayout(fresh)
    assert meta.load_or_create_keypair(layout).public_key_b64 == offer.daemon_public_key_b64
    assert meta.load_or_create_server_id(layout, {}) == offer.server_id


def test_plain_output_is_scan_to_pair_the_qr_and_the_url(paseo_home: Path) -> None:
    _enable(paseo_home)
    result = _pair(paseo_home)
    lines = result.stdout.split("\n")
    assert lines[:2] == ["", "Scan to pair:"]
    assert lines[-2].startswith("https://app.paseo.sh/#offer=")
    assert all("█" in line or "▀" in line or "▄" in line for line in lines[2:-2])


def test_the_app_base_url_comes_from_the_environment_then_the_config(paseo_home: Path) -> None:
    _enable(paseo_home)
    document = json.loads((paseo_home / "config.json").read_text(encoding="utf-8"))
    document["app"] = {"baseUrl": "https://mine.example/app/"}
    (paseo_home / "config.json").write_text(json.dumps(document), encoding="utf-8")
    url = json.loads(_pair(paseo_home, "--json").stdout)["url"]
    assert url.startswith("https://mine.example/app/#offer=")
    url = json.loads(_pair(paseo_home, "--json", PASEO_APP_BASE_URL="http://x").stdout)["url"]
    assert url.startswith("http://x/#offer=")


def test_rotate_makes_a_new_keypair_and_old_offers_name_the_old_key(paseo_home: Path) -> None:
    _enable(paseo_home)
    before = parse_offer_url(json.loads(_pair(paseo_home, "--json").stdout)["url"])
    rotated = _pair(paseo_home, "--json", "--rotate")
    assert rotated.returncode == 0
    assert "no longer work" in rotated.stderr
    after = parse_offer_url(json.loads(rotated.stdout)["url"])
    assert after.server_id == before.server_id
    assert after.daemon_public_key_b64 != before.daemon_public_key_b64
    keypair = json.loads((paseo_home / "daemon-keypair.json").read_text(encoding="utf-8"))
    assert keypair["publicKeyB64"] == after.daemon_public_key_b64
    assert stat.S_IMODE((paseo_home / "daemon-keypair.json").stat().st_mode) == 0o600


def test_a_broken_keypair_is_an_error_not_a_traceback(paseo_home: Path) -> None:
    _enable(paseo_home)
    (paseo_home / "daemon-keypair.json").write_text("{not json", encoding="utf-8")
    result = _pair(paseo_home, "--json")
    assert result.returncode == 1
    assert "--rotate" in result.stderr
    assert "Traceback" not in result.stderr
    assert _pair(paseo_home, "--json", "--rotate").returncode == 0


def test_a_bad_public_endpoint_is_said_at_pairing(paseo_home: Path) -> None:
    _enable(paseo_home, publicEndpoint="no port here")
    result = _pair(paseo_home)
    assert result.returncode == 1
    assert "publicEndpoint" in result.stderr


def test_only_a_sub_command_the_kernel_lacks_loads_plugins() -> None:
    probe = (
        "import sys; from paseo.cli.app import build_parser; "
        "build_parser('daemon', sys.argv[1:]); print('paseo_relay' in sys.modules)"
    )

    def loads(*argv: str) -> bool:
        result = subprocess.run(
            [sys.executable, "-c", probe, *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return result.stdout.strip() == "True"

    assert not loads("daemon", "status")
    assert not loads("daemon", "start", "--foreground")
    assert loads("daemon", "pair")
    assert loads("daemon", "--help")
