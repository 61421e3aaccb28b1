"""The provider conformance suite on ``pi``: the real pinned Pi against the fake.

Pi never asks for permission, so the two permission scenarios are replaced by what Pi promises
instead: the write runs at once, the timeline shows the tool call, and ``respond_permission``
knows no request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.pi.env import PI_MODEL, pi_env
from helpers.agents_env import agent_binary
from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.events import AllowResolution, Timeline
from paseo_hookspecs.interfaces.agent import SessionConfig
from paseo_pi.provider import PiProvider

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import (
    ConformanceHarness,
    ProviderConformance,
    conformance_test,
)

pytestmark = pytest.mark.e2e


class TestPiConformance(ProviderConformance):
    def make_provider(self) -> PiProvider:
        return PiProvider(command=[str(agent_binary("pi"))])

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return pi_env(fake.url, root)

    def session_config(self, *, agent_id: str, cwd: Path, env: dict[str, str]) -> SessionConfig:
        return SessionConfig(agentId=agent_id, cwd=str(cwd), env=env, model=PI_MODEL)

    @conformance_test
    async def test_permission_allowed_writes_the_file(self, h: ConformanceHarness) -> None:
        """Pi asks nobody: the write runs at once and the timeline shows the tool call."""
        agent = await h.start()
        events = await agent.turn(self.prompt_write("allowed.txt", "pi-wrote-this"))
        assert events[-1].type == "turn_completed", events[-1]
        assert not [e for e in events if e.type == "permission_requested"]
        assert (Path(agent.config.cwd) / "allowed.txt").read_text() == "pi-wrote-this"
        tools = [e.item for e in events if isinstance(e, Timeline) and e.item.type == "tool_call"]
        assert [(t.name, t.status) for t in tools] == [("write", "running"), ("write", "completed")]
        assert tools[-1].detail.type == "write"
        assert agent.session.runtime_info()["permissionPrompts"] is False

    @conformance_test
    async def test_permission_denied_writes_nothing(self, h: ConformanceHarness) -> None:
        """There is no request to deny: answering one is ``NotFound``."""
        agent = await h.start()
        with pytest.raises(NotFound):
            await agent.session.respond_permission("perm-1", AllowResolution())
        assert await h.provider.list_modes(h.launcher) == []
