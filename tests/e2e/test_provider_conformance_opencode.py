"""The provider conformance suite on ``opencode``: the real pinned OpenCode against the fake.

At start-up OpenCode installs ``@opencode-ai/plugin`` into its configuration directory from
registry.npmjs.org (:data:`NPM_ATTEMPT`); the refusing proxy refuses it, the turns work, and
nothing else may be tried.

OpenCode runs tools inside its one shared server, so no process carries a session's
``PASEO_AGENT_ID``: the "close leaves no process" scenario is replaced by what the shared server
promises instead (one server for all sessions; gone once the last session closes).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest
from e2e.opencode.env import OPENCODE_MODEL, opencode_env
from helpers.agents_env import agent_binary
from paseo_hookspecs.interfaces.agent import SessionConfig
from paseo_opencode.provider import OpenCodeProvider

from paseo.testing.fake_model import FakeModelServer, RefusingProxy
from paseo.testing.provider_conformance import (
    ConformanceHarness,
    ProviderConformance,
    assistant_text,
    conformance_test,
)

pytestmark = pytest.mark.e2e

NPM_ATTEMPT = "CONNECT registry.npmjs.org:443"


def serve_processes(root: Path) -> list[int]:
    """Live ``opencode serve`` processes whose HOME is under ``root``."""
    found = []
    for process in psutil.process_iter():
        try:
            serving = "serve" in process.cmdline()
            ours = str(root) in process.environ().get("HOME", "")
            if serving and ours and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
        except (psutil.Error, OSError):
            continue
    return found


class TestOpenCodeConformance(ProviderConformance):
    """Mode ``build``: asks before edits and commands."""

    permission_mode = "build"

    def make_provider(self) -> OpenCodeProvider:
        return OpenCodeProvider(command=[str(agent_binary("opencode"))])

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return opencode_env(fake.url, root)

    def session_config(self, *, agent_id: str, cwd: Path, env: dict[str, str]) -> SessionConfig:
        return SessionConfig(
            agentId=agent_id, cwd=str(cwd), env=env, modeId=self.permission_mode,
            model=OPENCODE_MODEL,
        )  # fmt: skip

    def run_conformance_test(self, body: Any, tmp_path: Path) -> None:
        """The suite's runner, with a proxy that knows the npm attempt (see the docstring)."""

        async def main() -> None:
            async with FakeModelServer() as fake, RefusingProxy(expected=(NPM_ATTEMPT,)) as proxy:
                root = tmp_path / "conformance"
                root.mkdir()
                env = self.session_env(fake, root)
                harness = ConformanceHarness(self, root, fake, proxy, self.make_provider(), env)
                try:
                    await asyncio.wait_for(body(self, harness), self.test_timeout)
                finally:
                    await harness.close_all()
                assert set(proxy.expected_attempts) <= {NPM_ATTEMPT}

        asyncio.run(main())

    @conformance_test
    async def test_close_leaves_no_process(self, h: ConformanceHarness) -> None:
        """Two sessions share one server; it ends with the last session."""
        first, second = await asyncio.gather(h.start(), h.start())
        for agent in (first, second):
            events = await agent.turn(self.prompt_text("shared-server"))
            assert events[-1].type == "turn_completed", events[-1]
            assert "shared-server" in assistant_text(events)
        assert len(await asyncio.to_thread(serve_processes, h.root)) == 1
        await first.session.close()
        assert len(await asyncio.to_thread(serve_processes, h.root)) == 1
        await second.session.close()
        assert await asyncio.to_thread(serve_processes, h.root) == []
        await second.session.close()  # idempotent

    @conformance_test
    async def test_a_dead_server_is_restarted(self, h: ConformanceHarness) -> None:
        """The shared server killed between turns: the next prompt starts a new one, and the
        conversation (OpenCode's stored session) carries on."""
        agent = await h.start()
        assert (await agent.turn(self.prompt_text("before-kill")))[-1].type == "turn_completed"
        [old] = await asyncio.to_thread(serve_processes, h.root)
        os.killpg(old, signal.SIGKILL)
        events = await agent.turn(self.prompt_text("after-restart"))
        assert events[-1].type == "turn_completed", events[-1]
        assert "after-restart" in assistant_text(events)
        assert [r for r in h.requests_with("after-restart") if "before-kill" in r.body.decode()]
        [new] = await asyncio.to_thread(serve_processes, h.root)
        assert new != old

    @conformance_test
    async def test_modes_and_models(self, h: ConformanceHarness) -> None:
        """Modes are OpenCode's agents plus full-access; models come from its provider list."""
        # Listings start the server with the provider's own environment (config.json's env).
        provider = OpenCodeProvider(command=[str(agent_binary("opencode"))], env=h.env)
        modes = [m.id for m in await provider.list_modes(h.launcher)]
        assert modes[:3] == ["build", "plan", "full-access"]
        models = {m.id: m for m in await provider.list_models(h.launcher)}
        # OpenCode's own free "opencode" provider is always connected; the fake's models are ours.
        assert {"fake/fake-model", "fake/fake-think"} <= set(models)
        assert models["fake/fake-model"].default
        assert [t.id for t in models["fake/fake-think"].thinkingOptions] == [
            "low",
            "medium",
            "high",
        ]
        assert await asyncio.to_thread(serve_processes, h.root) == []
