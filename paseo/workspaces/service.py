"""The ``workspaces`` kernel service: projects, workspaces, worktrees, labels, reconciliation.

:class:`Placement` wires the parts together for any store and git runner (tests use it
directly); :class:`WorkspacesService` is the daemon service around it, built by the composition
root from narrow ports. Other services get the service itself as their placement port::

    workspace = await workspaces.ensure_workspace_for_cwd(cwd)

The RPC adapters (``project.*``, ``workspace.*``, ``worktree.*``, ``label.*``) reach it through a
:class:`paseo.services.ServiceRef`; this module does not know them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import WorkspaceRecord

from paseo.config.models import ServicePortsConfig
from paseo.git.runner import GitRunner
from paseo.projects.common import Publish, no_publish
from paseo.projects.icons import IconStore
from paseo.projects.service import ProjectRegistry
from paseo.workspaces.common import OWNER, STREAM
from paseo.workspaces.git_runtime import GitRuntimes
from paseo.workspaces.labels import LabelService
from paseo.workspaces.legacy_agents import assign_workspaces_once
from paseo.workspaces.provisioning import WorkspaceProvisioningService
from paseo.workspaces.reconcile import DEFAULT_INTERVAL, Reconciler
from paseo.workspaces.status import RunningWork, StatusWatch, WorkspaceActivity
from paseo.worktrees.service import BranchNamer, WorktreeService
from paseo.worktrees.setup_status import SetupLog

if TYPE_CHECKING:
    from paseo.services import ConfigView, Publisher

AfterCreate = Callable[[WorkspaceRecord], Awaitable[None]]


@dataclass
class Placement:
    """Every placement service over one store."""

    projects: ProjectRegistry
    workspaces: WorkspaceProvisioningService
    labels: LabelService
    worktrees: WorktreeService
    reconciler: Reconciler
    work: RunningWork = field(default_factory=RunningWork)
    setup: SetupLog = field(default_factory=SetupLog)
    """The last setup of each workspace (fed by the worktrees' progress)."""
    after_create: AfterCreate | None = None
    """Awaited with a newly created worktree's workspace (its ``worktree.terminals`` open)."""
    git_runtime: GitRuntimes | None = None
    """Each workspace's live Git state (changes, ahead/behind), read on demand."""

    def running(self) -> set[str]:
        """Workspaces whose status bucket is ``running``: each counts only the work that
        carries its own ``workspaceId`` (a same-cwd sibling is untouched)."""
        return self.work.running()

    @classmethod
    def build(
        cls,
        store: Store,
        *,
        home: Path,
        git: GitRunner,
        worktrees_root: Callable[[], str],
        service_ports: Callable[[], ServicePortsConfig | None] = lambda: None,
        publish: Publish = no_publish,
        reconcile_interval: float = DEFAULT_INTERVAL,
        branch_namer: BranchNamer | None = None,
        before_archive: Callable[[str], Awaitable[None]] | None = None,
        after_create: AfterCreate | None = None,
    ) -> Placement:
        setup = SetupLog()

        def publish_progress(method: str, payload: dict[str, Any]) -> None:
            setup.observe(method, payload)
            publish(method, payload)

        projects = ProjectRegistry(store, IconStore(home / "projects" / "icons"), publish)
        workspaces = WorkspaceProvisioningService(
            store,
            projects,
            state_root=str(home),
            worktrees_root=worktrees_root,
            publish=publish,
        )
        return cls(
            projects=projects,
            workspaces=workspaces,
            labels=LabelService(store, workspaces, publish),
            worktrees=WorktreeService(
                workspaces,
                git,
                worktrees_root=worktrees_root,
                service_ports=service_ports,
                publish=publish_progress,
                branch_namer=branch_namer,
                before_archive=before_archive,
            ),
            reconciler=Reconciler(projects, workspaces, interval=reconcile_interval),
            setup=setup,
            after_create=after_create,
            git_runtime=GitRuntimes(git),
        )


class WorkspacesService:
    """The daemon service over one open store (see the module docstring)."""

    name = "workspaces"

    def __init__(
        self,
        *,
        store: Store,
        publisher: Publisher,
        config: ConfigView,
        git: GitRunner,
        home: Path,
        branch_namer: BranchNamer | None = None,
        before_archive: Callable[[str], Awaitable[None]] | None = None,
        after_create: AfterCreate | None = None,
    ) -> None:
        def publish(method: str, payload: dict[str, Any]) -> None:
            publisher.publish(STREAM, method, payload)

        # Declared up front: a client may subscribe before the first change is published.
        publisher.register_stream(STREAM, OWNER)

        self._store = store
        self._home = home
        self._late_pass: asyncio.Task[None] | None = None
        self.placement = Placement.build(
            store,
            home=home,
            git=git,
            worktrees_root=lambda: config.resolved.worktrees.root,
            service_ports=lambda: config.resolved.worktrees.servicePorts,
            publish=publish,
            branch_namer=branch_namer,
            before_archive=before_archive,
            after_create=after_create,
        )
        self.status = StatusWatch(self.placement.running, publish)
        """Announces ``workspace.status``."""
        self.activity = WorkspaceActivity(self.placement.work, self.status)
        """What makes workspaces run, as the rooms that run work tell it: an observer of the
        agent port, and the terminal service's activity callback."""

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord:
        """The workspace an agent running in ``cwd`` belongs to (created, with its project,
        when missing): the agent manager's placement port."""
        return await self.placement.workspaces.ensure_workspace_for_cwd(cwd)

    async def restore_for_agent(self, workspace_id: str | None) -> WorkspaceRecord | None:
        """Bring back the workspace of an agent restored from the trash, and its project, when
        either was archived meanwhile: the agent's history points at them, and an agent in an
        archived workspace is hidden from the places that list it. Returns the workspace
        (``None``: the agent had none, or it is gone for good)."""
        if not workspace_id:
            return None
        try:
            workspace = await self.placement.workspaces.get(workspace_id)
        except NotFound:
            return None
        await self.placement.projects.restore(workspace.projectId)
        if workspace.archivedAt is None:
            return workspace
        # A Paseo-owned checkout removed with the archive is recreated; its setup is not run
        # again (the agent's own history is what comes back, not a fresh workspace).
        return await self.placement.worktrees.restore(workspace_id, run_setup=False)

    async def start(self) -> None:
        # Before the agent service (started after this one) loads any agent record.
        # Answered from the store's index as it is: a store still checking it (a large JSON
        # home just opened) must not hold the start back; the pass runs again once it settled.
        complete = await assign_workspaces_once(
            self._store, self._home, self.ensure_workspace_for_cwd, now=True
        )
        if not complete:
            self._late_pass = asyncio.get_running_loop().create_task(self._pass_when_settled())
        await self.placement.reconciler.start(watch=False)

    async def _pass_when_settled(self) -> None:
        try:
            await self._store.agents.settled()
            await assign_workspaces_once(self._store, self._home, self.ensure_workspace_for_cwd)
        except Exception:
            logging.getLogger("paseo.workspaces").exception(
                "placing agents recorded without a workspace failed"
            )

    async def legacy_agents_placed(self) -> None:
        """The agent port's wait for the late pass (:meth:`start`), if one is running. Not
        cancelled with its waiter, and a pass cancelled or failed is waited for as done."""
        task = self._late_pass
        if task is not None and not task.done():
            await asyncio.wait({task})

    async def serving(self) -> None:
        """Start the file watcher once the daemon listens: importing watchfiles (and anyio)
        is not on the path to accepting connections, the periodic pass covers the gap."""
        self.placement.reconciler.watcher.start()

    async def stop(self) -> None:
        task, self._late_pass = self._late_pass, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.status.stop()
        await self.placement.reconciler.stop()
