"""The terminal service over a real store, with a placement port that knows one directory."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.records import WorkspaceRecord
from paseo_store_json import JsonStore

from paseo.config import load_config
from paseo.terminals.profiles import no_provider_profiles
from paseo.terminals.service import TerminalService


class _Publisher:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []
        self.published = asyncio.Event()

    def count(self, method: str) -> int:
        return sum(1 for event in self.events if event[1] == method)

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        return

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        self.events.append((stream, method, dict(payload)))
        self.published.set()


class _Config:
    def __init__(self, path: Path) -> None:
        self.resolved = load_config(path, env={}, home=path.parent).resolved


class _OneDirectory:
    def __init__(self, cwd: Path) -> None:
        self.record = WorkspaceRecord(
            workspaceId="wks_test",
            projectId="prj_test",
            cwd=str(cwd),
            kind="directory",
            displayName="test",
            createdAt="2026-01-01T00:00:00.000Z",
            updatedAt="2026-01-01T00:00:00.000Z",
            archivedAt=None,
        )

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord:
        assert cwd == self.record.cwd
        return self.record


def test_only_the_most_recent_exited_terminals_stay_listed(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    quick = {"id": "quick", "name": "Quick", "command": "sh", "args": ["-c", "echo done"]}
    config.write_text(json.dumps({"daemon": {"terminalProfiles": [quick]}}))
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    async def scenario() -> None:
        store = JsonStore(tmp_path / "home")
        await store.open()
        publisher = _Publisher()
        service = TerminalService(
            store=store,
            publisher=publisher,
            config=_Config(config),
            placement=_OneDirectory(workspace),
            profiles=no_provider_profiles,
            keep_exited=2,
        )
        await service.start()
        try:
            created = [(await service.create(cwd=str(workspace))).terminalId for _ in range(4)]
            async with asyncio.timeout(30):
                while publisher.count("terminal.exited") < 4:
                    publisher.published.clear()
                    await publisher.published.wait()
            listed = [t.terminalId for t in service.terminals()]
            assert listed == created[-2:]
            assert all(t.state == "exited" and t.exitCode == 0 for t in service.terminals())
            removed = [
                e[2]["terminal"]["terminalId"]
                for e in publisher.events
                if e[1] == "terminal.changed" and e[2]["removed"]
            ]
            assert removed == created[:2]
            assert await store.managed_processes.list() == []
        finally:
            await service.stop()
            await store.close()

    asyncio.run(scenario())


def test_terminals_beyond_the_configured_cap_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    waiting = {"id": "cat", "name": "Cat", "command": "cat"}
    config.write_text(json.dumps({"daemon": {"terminalProfiles": [waiting], "maxTerminals": 3}}))
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    async def scenario() -> None:
        store = JsonStore(tmp_path / "home")
        await store.open()
        service = TerminalService(
            store=store,
            publisher=_Publisher(),
            config=_Config(config),
            placement=_OneDirectory(workspace),
            profiles=no_provider_profiles,
        )
        await service.start()
        try:
            # Created at once: creations still starting count against the cap too.
            results = await asyncio.gather(
                *(service.create(cwd=str(workspace)) for _ in range(5)), return_exceptions=True
            )
            created = [r for r in results if not isinstance(r, BaseException)]
            refused = [r for r in results if isinstance(r, BaseException)]
            assert len(created) == 3
            assert len(refused) == 2
            assert all(isinstance(r, Unavailable) for r in refused), refused
            assert "daemon.maxTerminals" in str(refused[0])
            assert refused[0].data == {"running": 3, "maxTerminals": 3}  # type: ignore[attr-defined]
            assert len(service.terminals()) == 3
            # A killed one frees its place.
            await service.kill(created[0].terminalId)
            again = await service.create(cwd=str(workspace))
            assert again.state == "running"
            with pytest.raises(Unavailable):
                await service.create(cwd=str(workspace))
        finally:
            await service.stop()
            await store.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))
