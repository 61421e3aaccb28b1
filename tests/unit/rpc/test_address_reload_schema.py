"""Addresses, reload classification, redaction, error mapping and the committed schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from paseo_hookspecs.errors import NotFound

from paseo.config import load_config
from paseo.daemon.reload import _keep_startup_values, changed_paths, is_runtime_safe, redact
from paseo.daemon.schema import daemon_schema
from paseo.rpc.address import Address, AddressError, parse_address
from paseo.rpc.errors import MethodNotFound, error_object, from_error_object
from paseo.rpc.schema import render

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:6767", Address(host="127.0.0.1", port=6767)),
        ("6767", Address(host="127.0.0.1", port=6767)),
        ("0", Address(host="127.0.0.1", port=0)),
        ("[::1]:80", Address(host="::1", port=80)),
        ("localhost:1", Address(host="localhost", port=1)),
        ("unix:///run/paseo.sock", Address(path="/run/paseo.sock")),
        ("/tmp/p.sock", Address(path="/tmp/p.sock")),
        ("ws://127.0.0.1:9/ws", Address(host="127.0.0.1", port=9)),
    ],
)
def test_parse_address(text: str, expected: Address) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["", "host", "host:x", "1:2:3", "unix://relative", "70000"])
def test_parse_address_rejects(text: str) -> None:
    with pytest.raises(AddressError):
        parse_address(text)


def test_address_forms() -> None:
    assert Address(host="::1", port=5).listen_form() == "[::1]:5"
    assert Address(host="127.0.0.1", port=5).ws_url() == "ws://127.0.0.1:5/ws"
    assert Address(path="/s").ws_url() == "unix:///s"
    assert Address(path="/s").is_loopback
    assert not Address(host="10.0.0.1", port=1).is_loopback


def test_changed_paths_and_classification() -> None:
    before = {"daemon": {"git": {"maxProcessConcurrency": 8}, "listen": "a"}, "x": [1]}
    after = {"daemon": {"git": {"maxProcessConcurrency": 2}, "listen": "b"}, "x": [1, 2]}
    assert changed_paths(before, after) == [
        "daemon.git.maxProcessConcurrency",
        "daemon.listen",
        "x",
    ]
    assert is_runtime_safe("daemon.git.maxProcessConcurrency")
    assert is_runtime_safe("log.level")
    assert not is_runtime_safe("daemon.listen")
    assert not is_runtime_safe("storage.driver")
    assert not is_runtime_safe("daemon.gitx")


def test_startup_values_are_kept(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    before = load_config(config, env={"PASEO_PASSWORD": "pw"}, home=tmp_path).resolved
    config.write_text('{"storage": {"driver": "sqlite"}, "log": {"level": "debug"}}')
    after = load_config(config, env={"PASEO_PASSWORD": "pw"}, home=tmp_path).resolved
    merged = _keep_startup_values(before, after, {("storage", "driver"): "json"})
    assert merged.storage.driver == "json"
    assert merged.log.level == "debug"
    assert merged.daemon.auth.envPassword == "pw"


def test_redact() -> None:
    data = {"daemon": {"auth": {"password": "$2b$hash"}}, "stt": [{"apiKey": "sk"}], "n": 1}
    assert redact(data) == {
        "daemon": {"auth": {"password": "********"}},
        "stt": [{"apiKey": "********"}],
        "n": 1,
    }


def test_error_round_trip() -> None:
    wire = error_object(NotFound("no agent", data={"agentId": "a"}))
    assert wire == {
        "code": -32000,
        "message": "no agent",
        "data": {"agentId": "a", "code": "not_found"},
    }
    back = from_error_object(wire)
    assert isinstance(back, NotFound)
    assert back.data == {"agentId": "a"}
    assert isinstance(from_error_object(error_object(MethodNotFound("x"))), MethodNotFound)
    custom = from_error_object({"code": -32000, "message": "m", "data": {"code": "brand_new"}})
    assert custom.code == "brand_new"


def test_committed_protocol_schema_is_current() -> None:
    committed = (REPO / "docs" / "protocol.schema.json").read_text(encoding="utf-8")
    assert committed == render(daemon_schema()), (
        "docs/protocol.schema.json is stale: run "
        "`python -m paseo.daemon.schema docs/protocol.schema.json`"
    )
