"""The transport host's admission decisions (:meth:`RpcServer.admit`): what a transport
observed goes in, the HTTP answer and the session kind come out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from paseo_hookspecs.transport import Admission, AdmissionPurpose, PeerFacts

from paseo.config import load_config
from paseo.rpc.server import RpcServer

CREDENTIAL = "local-credential"


class _Context:
    def config_section(self, plugin_id: str) -> Any:
        return {"plugin": plugin_id}


def _server(home: Path, daemon: dict[str, Any] | None = None) -> RpcServer:
    (home / "config.json").write_text(json.dumps({"daemon": daemon or {}}))
    loaded = load_config(home / "config.json", env={}, home=home)

    async def status() -> Any:
        raise AssertionError("not called")

    return RpcServer(
        _Context(),  # type: ignore[arg-type]
        config=loaded,
        local_credential=CREDENTIAL,
        status=status,
    )


def _admit(
    server: RpcServer, purpose: AdmissionPurpose, *, at_capacity: bool = False, **facts: Any
) -> Admission:
    seen = PeerFacts(
        transport=facts.pop("transport", "tcp"),
        unix_socket=facts.pop("unix_socket", False),
        peer=facts.pop("peer", "127.0.0.1"),
        **{"hosts": ("127.0.0.1:6767",), **facts},
    )
    return asyncio.run(server.admit(seen, purpose, at_capacity=at_capacity))


def test_screening_refuses_a_foreign_or_repeated_host_and_repeated_origins(
    tmp_path: Path,
) -> None:
    server = _server(tmp_path)
    assert _admit(server, "public", hosts=("evil.example",)).status == 403
    assert _admit(server, "public", hosts=("localhost", "localhost")).status == 403
    assert _admit(server, "public", hosts=()).status == 403
    two = ("http://localhost:6767", "http://localhost:6767")
    assert _admit(server, "public", origins=two).status == 403
    assert _admit(server, "public").admitted


def test_public_answers_echo_only_an_allowed_origin(tmp_path: Path) -> None:
    server = _server(tmp_path, {"cors": {"allowedOrigins": ["https://app.example"]}})
    allowed = _admit(server, "public", origins=("https://app.example",))
    assert allowed.admitted
    assert allowed.cors_origin == "https://app.example"
    foreign = _admit(server, "public", origins=("https://evil.example",))
    assert foreign.admitted
    assert foreign.cors_origin is None
    # An authenticated answer refuses a foreign browser origin outright.
    assert _admit(server, "status", origins=("https://evil.example",)).status == 403


def test_sessions_check_origin_then_capacity_then_credential(tmp_path: Path) -> None:
    server = _server(tmp_path)
    evil = ("https://evil.example",)
    assert _admit(server, "session", at_capacity=True, origins=evil).status == 403
    assert _admit(server, "session", at_capacity=True, credential=CREDENTIAL).status == 503
    assert _admit(server, "session", credential="wrong").status == 401
    assert _admit(server, "session").status == 401
    admitted = _admit(server, "session", credential=CREDENTIAL)
    assert admitted.admitted
    assert admitted.kind == "local"
    assert admitted.observed is not None
    assert admitted.observed.client_address == "127.0.0.1"
    server.accepting = False
    assert _admit(server, "session", credential=CREDENTIAL).status == 503


def test_the_local_credential_counts_only_from_this_machine(tmp_path: Path) -> None:
    server = _server(tmp_path, {"hostnames": True})
    assert _admit(server, "status", peer="203.0.113.9", credential=CREDENTIAL).status == 401
    unix = _admit(
        server, "status", transport="unix", unix_socket=True, peer=None, credential=CREDENTIAL
    )
    assert unix.kind == "local"
    assert unix.observed is not None
    assert unix.observed.client_address is None


def test_a_trusted_proxy_forwards_the_client_address(tmp_path: Path) -> None:
    server = _server(tmp_path)
    # The default trusts a loopback proxy: the forwarded client is remote, so the local
    # credential no longer counts.
    forwarded = _admit(
        server, "status", forwarded_for="198.51.100.7, 127.0.0.1", credential=CREDENTIAL
    )
    assert forwarded.status == 401
    assert forwarded.observed is not None
    assert forwarded.observed.client_address == "198.51.100.7"


def test_the_host_hands_over_listen_and_plugin_settings(tmp_path: Path) -> None:
    server = _server(tmp_path, {"listen": "127.0.0.1:7001"})
    assert server.listen == "127.0.0.1:7001"
    assert server.config_section("websocket") == {"plugin": "websocket"}
    assert server.health()["ok"] is True
