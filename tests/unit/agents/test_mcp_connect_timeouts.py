"""Agent programs given MCP servers wait long enough for them to connect.

Claude Code gives up on a server after ~25 s (``MCP_TIMEOUT``), Codex after 10 s
(``startup_timeout_sec``), and then run the turn without its tools; a loaded machine can take
longer than that to answer the injected server's first request.
"""

from __future__ import annotations

import sys

import pytest
from paseo_claude.provider import MCP_CONNECT_TIMEOUT_MS, ClaudeOptions, ClaudeProvider
from paseo_codex.requests import MCP_STARTUP_TIMEOUT_SEC, codex_mcp_servers
from paseo_hookspecs.interfaces.agent import SessionConfig

SERVERS = {"paseo": {"type": "http", "url": "http://127.0.0.1:1/mcp/agents?token=t"}}


def _claude_env(monkeypatch: pytest.MonkeyPatch, **fields: object) -> dict[str, str]:
    monkeypatch.delenv("MCP_TIMEOUT", raising=False)
    options = fields.pop("options", ClaudeOptions(command=(sys.executable,)))
    provider = ClaudeProvider(options=options)  # type: ignore[arg-type]
    config = SessionConfig(agentId="a", cwd="/w", **fields)  # type: ignore[arg-type]
    return provider.launch_spec(config).env


def test_claude_code_gets_a_longer_mcp_connect_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _claude_env(monkeypatch, mcpServers=SERVERS)["MCP_TIMEOUT"] == MCP_CONNECT_TIMEOUT_MS
    assert int(MCP_CONNECT_TIMEOUT_MS) >= 60_000


def test_claude_code_keeps_a_configured_timeout_and_none_without_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "MCP_TIMEOUT" not in _claude_env(monkeypatch)
    own = ClaudeOptions(command=(sys.executable,), env={"MCP_TIMEOUT": "5000"})
    assert _claude_env(monkeypatch, mcpServers=SERVERS, options=own)["MCP_TIMEOUT"] == "5000"
    assert (
        _claude_env(monkeypatch, mcpServers=SERVERS, env={"MCP_TIMEOUT": "7000"})["MCP_TIMEOUT"]
        == "7000"
    )


def test_codex_gets_a_longer_mcp_startup_timeout() -> None:
    stdio = {"local": {"command": "server", "args": ["--x"]}}
    table = codex_mcp_servers({**SERVERS, **stdio})
    assert table["paseo"]["startup_timeout_sec"] == MCP_STARTUP_TIMEOUT_SEC
    assert table["local"]["startup_timeout_sec"] == MCP_STARTUP_TIMEOUT_SEC
    assert MCP_STARTUP_TIMEOUT_SEC >= 60
