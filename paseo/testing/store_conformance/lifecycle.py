"""A fresh store, closing, and a restart that keeps everything acknowledged."""

from __future__ import annotations

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    ManagedProcessRecord,
    ProjectRecord,
    ScheduleRecord,
    WorkspaceRecord,
)

from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.reading import snapshot
from paseo.testing.store_conformance.records import (
    _agent,
    _entries,
    _plugin_source,
    agent_data,
    iso,
    managed_process_data,
    plugin_source_data,
    project_data,
    schedule_data,
    workspace_data,
)


class LifecycleTests(StoreSuite):
    """A fresh store, closing, and a restart that keeps everything acknowledged."""

    @store_test
    async def test_fresh_home_is_empty(self, store: Store) -> None:
        """A store opened on an empty home holds nothing and quarantined nothing."""
        assert store.quarantined == []
        assert await snapshot(store) == {
            "agents": [],
            "timelines": {},
            "schedules": [],
            "projects": [],
            "workspaces": [],
            "labels": [],
            "push_tokens": [],
            "managed_processes": [],
            "plugin_sources": {},
            "trash": {"queued": [], "lastSweep": None},
            "usage": [],
            "plugin_records": {},
        }
        assert await store.agents.count() == 0

    @store_test
    async def test_close_is_idempotent(self, store: Store) -> None:
        await store.agents.insert(_agent(agent_data()))
        await store.close()
        await store.close()
        reopened = await self.open_store(store.home)
        assert await reopened.agents.count() == 1

    @store_test
    async def test_restart_preserves_everything(self, store: Store) -> None:
        """Every kind of record written, then a new instance on the same home sees it all."""
        await self._populate(store)
        before = await snapshot(store)
        store = await self.reopen(store)
        assert store.quarantined == []
        assert await snapshot(store) == before
        # Writes after a restart persist as well, and a second restart changes nothing.
        await store.labels.edit("Backend", new_name="Server", now=iso(5000))
        await store.agents.update(before["agents"][0]["id"], {"lastStatus": "running"})
        after = await snapshot(store)
        store = await self.reopen(store)
        assert await snapshot(store) == after

    async def _populate(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Web", "pink")
        project = project_data()
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(project))
        archived = project_data(root="/src/old", archived_at=iso(3))
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(archived))
        for i in range(4):
            ws = workspace_data(
                project_id=project["projectId"],
                cwd=f"/src/w{i}",
                created_at=iso(i),
                labels=[["Backend"], ["Web", "Backend"], [], ["Web"]][i],
                archived_at=iso(9) if i == 3 else None,
            )
            await store.workspaces.insert(WorkspaceRecord.model_validate(ws))
            for j in range(3):
                agent = agent_data(
                    workspace_id=ws["workspaceId"],
                    cwd=ws["cwd"],
                    created_at=iso(10 * i + j),
                    archivedAt=iso(99) if j == 2 else None,
                )
                await store.agents.insert(_agent(agent))
                await store.timeline.append(_entries(agent["id"], range(j + 1)))
        for i in range(3):
            await store.schedules.insert(
                ScheduleRecord.model_validate(schedule_data(created_at=iso(i)))
            )
        await store.push_tokens.add("ExponentPushToken[one]")
        await store.push_tokens.add("ExponentPushToken[two]")
        await store.managed_processes.put(
            ManagedProcessRecord.model_validate(managed_process_data())
        )
        await store.plugin_sources.put("lint", _plugin_source(plugin_source_data("git")))
        await store.plugin_sources.put("fmt", _plugin_source(plugin_source_data("npm")))
