"""omp's modes as Paseo maps them: ``full-access`` starts omp with ``--approval-mode yolo``, so
a shell command runs without a permission request; ``default`` asks (the conformance suite and
the daemon test cover that)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from helpers.agents_env import agent_binary, omp_env
from paseo_acp.omp import MODES, OmpProvider
from paseo_hookspecs.events import PermissionRequested
from paseo_hookspecs.interfaces.agent import SessionConfig

from paseo.testing.fake_model import FakeModelServer, RefusingProxy
from paseo.testing.provider_conformance import RecordingSink, agent_process_ids, kernel_launcher

pytestmark = pytest.mark.e2e


def test_full_access_runs_the_shell_without_asking(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    provider = OmpProvider(overrides={"command": [str(agent_binary("omp")), "acp"]})
    env = {**omp_env(fake.url, tmp_path / "omp"), **proxy.proxy_env()}
    agent_id = f"omp-{uuid.uuid4().hex[:10]}"
    config = SessionConfig(agentId=agent_id, cwd=str(workdir), env=env, modeId="full-access")

    async def scenario() -> None:
        assert [m.id for m in await provider.list_modes(kernel_launcher())] == [m.id for m in MODES]
        sink = RecordingSink("omp")
        session = await provider.create_session(config, sink, kernel_launcher())
        try:
            await session.prompt("[[shell:printf yolo > free.txt]]", message_id="m-1")
            await sink.wait_index(
                lambda e: e.type in ("turn_completed", "turn_failed", "turn_canceled"),
                after=0,
                within=90,
                what="the end of the turn",
            )
            assert sink.events[-1].type == "turn_completed", sink.events[-1]
            assert not any(isinstance(e, PermissionRequested) for e in sink.events)
            assert (workdir / "free.txt").read_text() == "yolo"
        finally:
            await session.close()
        assert agent_process_ids(agent_id) == []

    asyncio.run(asyncio.wait_for(scenario(), 180))
