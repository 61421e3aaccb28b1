"""The local surface: the ``hub.relationship.*`` RPCs (trusted local, non-browser sessions
only), the ``paseo hub`` command group, the config section and the entry point."""

from __future__ import annotations

import argparse
import logging
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from helpers.hub_agents import Agents, Host, run
from paseo_hookspecs.errors import AccessDenied, Unavailable
from paseo_hookspecs.hub_host import HubCapableContext
from paseo_hookspecs.registration import CliCommandGroup, ConfigSection, RpcMethodGroup
from paseo_hub import cli, plugin
from paseo_hub.rpc import Runtime, method_group
from paseo_hub.service import HubService
from paseo_hub.settings import HubSettings


class Ctx:
    def __init__(self, kind: str) -> None:
        self.session_kind = kind
        self.client_id = "cli"


class Context:
    """A daemon context that offers (or not) a HubHost."""

    def __init__(self, home: Path, host: Host | None) -> None:
        self.home = home
        self.server_id = "srv_x"
        self.version = "0.0"
        self.log = logging.getLogger("test")
        self.store: Any = None
        self.agents: Any = None  # DaemonContext.agents (contract 2.0); unused by these tests
        if host is not None:
            self.hub_host = host

    def config_section(self, plugin_id: str) -> Any:
        return HubSettings()


def group() -> tuple[RpcMethodGroup, Runtime, Host]:
    runtime = Runtime()
    host = Host(Agents())
    runtime.host = host
    runtime.service = HubService(Path("/nonexistent"), host, server_id="s", version="0")
    return method_group(runtime), runtime, host


def test_the_group_is_local_only() -> None:
    methods, _, _ = group()
    assert methods.area == "hub.relationship"
    assert {m.name: m.access for m in methods.methods} == {
        "hub.relationship.connect": frozenset({"local"}),
        "hub.relationship.get_status": frozenset({"local"}),
        "hub.relationship.disconnect": frozenset({"local"}),
    }


@pytest.mark.parametrize("kind", ["remote", "hub"])
def test_remote_and_hub_sessions_are_denied(kind: str) -> None:
    methods, _, _ = group()
    status = next(m for m in methods.methods if m.name.endswith("get_status"))
    with pytest.raises(AccessDenied):
        run(status.handler(Ctx(kind), None))  # type: ignore[arg-type]


def test_a_browser_origin_local_session_is_denied() -> None:
    methods, _, host = group()
    host.trusted = False  # the kernel observed an Origin header
    for method in methods.methods:
        with pytest.raises(AccessDenied):
            run(method.handler(Ctx("local"), None))  # type: ignore[arg-type]


def test_a_trusted_local_session_gets_the_status() -> None:
    methods, _, _ = group()
    status = next(m for m in methods.methods if m.name.endswith("get_status"))
    result = run(status.handler(Ctx("local"), None))  # type: ignore[arg-type]
    assert result.state == "not_connected"


def test_calls_before_startup_are_unavailable() -> None:
    methods = method_group(Runtime())
    with pytest.raises(Unavailable):
        run(methods.methods[1].handler(Ctx("local"), None))  # type: ignore[arg-type]


def test_the_plugin_registers_its_groups_and_section() -> None:
    registered: list[Any] = []
    plugin.paseo_register_rpc_methods(register=registered.append)
    plugin.paseo_register_cli_commands(register=registered.append)
    plugin.paseo_register_config_sections(register=registered.append)
    rpc, command, section = registered
    assert isinstance(rpc, RpcMethodGroup)
    assert isinstance(command, CliCommandGroup)
    assert command.name == "hub"
    assert isinstance(section, ConfigSection)
    assert section.model is HubSettings
    assert any(e.value == "paseo_hub.plugin" for e in entry_points(group="paseo"))


def test_startup_needs_a_hub_capable_context(tmp_path: Path) -> None:
    without = Context(tmp_path, None)
    assert not isinstance(without, HubCapableContext)
    assert isinstance(Context(tmp_path, Host(Agents())), HubCapableContext)

    async def body() -> None:
        plugin.paseo_startup(context=without)  # type: ignore[arg-type]
        assert plugin.RUNTIME.service is None

    run(body())


def test_startup_starts_the_service(tmp_path: Path) -> None:
    async def body() -> None:
        plugin.paseo_startup(context=Context(tmp_path, Host(Agents())))  # type: ignore[arg-type]
        service = plugin.RUNTIME.service
        assert service is not None
        assert service.status().state == "not_connected"
        plugin.paseo_shutdown(context=Context(tmp_path, None))  # type: ignore[arg-type]
        assert plugin.RUNTIME.service is None
        await service.stop()

    run(body())
    plugin.RUNTIME.host = None


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    return parser.parse_args(argv)


def test_the_commands_parse() -> None:
    connect = parse("connect", "https://hub.example.com", "--token", "t0k")
    assert (connect.url, connect.token) == ("https://hub.example.com", "t0k")
    assert parse("disconnect", "--force").force is True
    assert parse("status").run is not None
    with pytest.raises(SystemExit):
        parse("connect", "https://hub.example.com")  # --token is required


def test_status_renders_as_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    status = {"state": "connected", "hubOrigin": "https://h", "scopes": ["hub.execution.*"],
              "since": "now", "lastError": None, "warning": None}
    assert cli.render(status, "json", "hub.relationship.get_status") == 0
    assert '"state": "connected"' in capsys.readouterr().out
    assert cli.render(status, "table", "hub.relationship.get_status") == 0
    out = capsys.readouterr().out
    assert "connected" in out
    assert "hub.execution.*" in out


def test_a_failed_connect_exits_non_zero_and_warnings_go_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failed = {"state": "not_connected", "lastError": "refused", "since": "now"}
    assert cli.render(failed, "table", "hub.relationship.connect") == 1
    forced = {"state": "not_connected", "since": "now", "warning": "pending"}
    assert cli.render(forced, "table", "hub.relationship.disconnect") == 0
    assert "warning: pending" in capsys.readouterr().err
