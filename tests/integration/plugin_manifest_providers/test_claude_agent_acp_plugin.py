"""The real pinned ACP agent (``@agentclientprotocol/claude-agent-acp``) installed as a plugin and
run through the daemon for one turn against the fake Anthropic server.

The test cannot reach the npm registry, and the pinned package's own dependencies (the Claude
Agent SDK with its native binaries, hundreds of MB) would need it. So the package installed here
is a local one with no dependencies whose executable ``claude-agent-acp`` is a wrapper exec-ing
the pinned launcher from ``tests/agents/node_modules``. It goes through exactly the user's path:
``npm pack`` → ``paseo plugins install <tarball>`` with the same flags a user gives the real
package (``--provider-id/--provider-label/--bin``; npm install scripts off) → the declared
provider, driven by ``acp``, in the daemon → ``paseo run``. Only the bytes behind the bin differ
from ``paseo plugins install npm:@agentclientprotocol/claude-agent-acp@0.101.0``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.agents_env import agent_binary, claude_agent_acp_env

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

# Start-up loads the Claude CLI's native binary: generous on a loaded 2-core machine.
START_TIMEOUT = "90"
RUN_TIMEOUT = 180.0


def test_pinned_claude_agent_acp_as_an_installed_plugin(
    paseo: Any, pack_npm_package: Any, tmp_path: Path, workdir: Path
) -> None:
    launcher = agent_binary("claude-agent-acp")
    tarball = pack_npm_package(
        tmp_path,
        name="claude-agent-acp-offline",
        bin_name="claude-agent-acp",
        exec_argv=[str(launcher)],
    )
    installed = paseo.json(
        "plugins",
        "install",
        str(tarball),
        "--id",
        "claude-acp",
        "--provider-id",
        "claude-acp",
        "--provider-label",
        "Claude (ACP)",
        "--bin",
        "claude-agent-acp",
    )
    assert installed["manifest"]["providers"][0]["id"] == "claude-acp"

    with FakeModelServer() as fake, RefusingProxy() as proxy:
        env = claude_agent_acp_env(fake.url, tmp_path / "agent", proxy_env=proxy.proxy_env())
        paseo.start_daemon({**env, "PASEO_AGENT_START_TIMEOUT": START_TIMEOUT})
        listed = {p["id"]: p for p in paseo.json("provider", "ls", "--refresh")}
        assert listed["claude-acp"]["label"] == "Claude (ACP)"
        assert listed["claude-acp"]["extends"] == "acp"
        assert listed["claude-acp"]["availability"]["status"] == "ready"

        done = paseo.run(
            "run",
            "--provider",
            "claude-acp",
            "--cwd",
            str(workdir),
            "[[reply:hi from the plugin]]",
            timeout=RUN_TIMEOUT,
        )
        assert done.stdout == "hi from the plugin\n"
        assert "finished (idle)" in done.stderr
        assert any(r.prompt == "[[reply:hi from the plugin]]" for r in fake.model_requests())
        paseo.stop_daemon()
        assert proxy.attempts == [], "the agent tried to reach the network"
