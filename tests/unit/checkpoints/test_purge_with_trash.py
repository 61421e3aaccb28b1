"""A purge by the real trash service removes the agent's checkpoint refs and state: the trash is
built as the composition root builds it, with the checkpoint service's ``purge`` as its purge
listener, on the real JSON store and a real git repository."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentRecord

from paseo.checkpoints.plumbing import REF_ROOT
from paseo.checkpoints.service import CheckpointService
from paseo.config.models import PaseoConfig
from paseo.config.resolution import resolve
from paseo.git.limiter import GitProcessLimiter
from paseo.git.runner import GitRunner
from paseo.plugins.drivers import load_driver
from paseo.testing.store_conformance import agent_data
from paseo.trash.service import TrashService


class Config:
    def __init__(self, home: Path) -> None:
        self.resolved = resolve(PaseoConfig.model_validate({}), {}, home=home)


class Agents:
    """The agent port and the trash's agent side, as far as both use them."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def get(self, agent: str) -> AgentRecord:
        record = await self.store.agents.get(agent)
        assert record is not None
        return record

    def subscribe(self, observer: Any, **_: Any) -> Any:
        raise AssertionError("not started here")

    def working(self) -> bool:
        return False

    def readmit(self, record: AgentRecord) -> None:
        raise AssertionError("nothing is restored here")

    async def purged(self, agent_id: str) -> None:
        return None


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, timeout=30
    ).stdout


def test_purging_an_agent_drops_its_checkpoints(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")

    async def main() -> None:
        store: Store = load_driver("paseo.store", "json")(home, None)
        await store.open()
        try:
            agents = Agents(store)
            config = Config(home)
            runner = GitRunner(GitProcessLimiter())
            checkpoints = CheckpointService(
                runner=runner,
                agents=agents,  # type: ignore[arg-type]
                config=config,
                home=home,
            )
            trash = TrashService(
                store=store,
                config=config,
                agents=agents,
                home=home,
                purge_listeners=[checkpoints.purge],
            )
            data = agent_data(cwd=str(repo))
            await store.agents.insert(AgentRecord.model_validate(data))
            agent_id = str(data["id"])
            await checkpoints.begin(agent_id, "2026-01-01T00:00:00Z")
            (repo / "a.txt").write_text("b\n")
            await checkpoints.end(agent_id, "2026-01-01T00:00:10Z", "completed")
            assert git(repo, "for-each-ref", "--format=%(refname)", REF_ROOT).split() == [
                f"{REF_ROOT}/{agent_id}/1"
            ]
            assert (home / "checkpoints" / agent_id / "state.json").exists()
            await store.agents.update(agent_id, {"deletedAt": "2026-01-02T00:00:00.000Z"})
            report = await trash.empty()
            assert report.purged == [agent_id]
            assert report.cleaned == 1
            assert git(repo, "for-each-ref", REF_ROOT) == ""
            assert not (home / "checkpoints" / agent_id).exists()
        finally:
            await store.close()

    asyncio.run(asyncio.wait_for(main(), 60))
