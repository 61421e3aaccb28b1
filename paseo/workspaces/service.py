"""The ``workspaces`` kernel service: projects, workspaces, worktrees, labels, reconciliation.

:class:`Placement` wires the parts together for any store and git runner (tests use it
directly); :class:`WorkspacesService` is the daemon service around it. Other services reach the
provisioning entry point with :func:`provisioning_of`::

    workspace = await provisioning_of(daemon).ensure_workspace_for_cwd(cwd)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.interfaces.store import Store

from paseo.config.models import ServicePortsConfig
from paseo.git.runner import GitRunner
from paseo.projects.icons import IconStore
from paseo.projects.service import ProjectRegistry
from paseo.workspaces.common import STREAM, Publish, no_publish
from paseo.workspaces.labels import LabelService
from paseo.workspaces.provisioning import WorkspaceProvisioningService
from paseo.workspaces.reconcile import DEFAULT_INTERVAL, Reconciler
from paseo.worktrees.service import WorktreeService

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup

    from paseo.daemon.runtime import Daemon


@dataclass
class Placement:
    """Every placement service over one store."""

    projects: ProjectRegistry
    workspaces: WorkspaceProvisioningService
    labels: LabelService
    worktrees: WorktreeService
    reconciler: Reconciler

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
    ) -> Placement:
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
                publish=publish,
            ),
            reconciler=Reconciler(projects, workspaces, interval=reconcile_interval),
        )


class WorkspacesService:
    """The daemon service; parts are built at :meth:`start` (the store is open by then)."""

    name = "workspaces"

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._placement: Placement | None = None

    @property
    def placement(self) -> Placement:
        if self._placement is None:
            raise RuntimeError("the workspaces service has not started")
        return self._placement

    def _publish(self, method: str, payload: dict[str, Any]) -> None:
        rpc = self.daemon.rpc
        if rpc is not None:
            rpc.publish(STREAM, method, payload)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        return rpc_groups()

    async def start(self) -> None:
        from paseo.git.service import git_service

        daemon = self.daemon
        self._placement = Placement.build(
            daemon.store,
            home=daemon.home,
            git=git_service(daemon).runner,
            worktrees_root=lambda: daemon.config.resolved.worktrees.root,
            service_ports=lambda: daemon.config.resolved.worktrees.servicePorts,
            publish=self._publish,
        )
        await self._placement.reconciler.start(watch=False)

    async def serving(self) -> None:
        """Start the file watcher once the daemon listens: importing watchfiles (and anyio)
        is not on the path to accepting connections, the periodic pass covers the gap."""
        if self._placement is not None:
            self._placement.reconciler.watcher.start()

    async def stop(self) -> None:
        if self._placement is not None:
            await self._placement.reconciler.stop()


def rpc_groups() -> list[RpcMethodGroup]:
    """The ``project``, ``workspace``, ``worktree`` and ``label`` method groups (they need no
    service instance, so the protocol schema generator can list them too)."""
    from paseo.projects.rpc import project_group
    from paseo.workspaces.rpc import label_group, workspace_group
    from paseo.worktrees.rpc import worktree_group

    return [project_group(), workspace_group(), worktree_group(), label_group()]


def create(daemon: Daemon) -> WorkspacesService:
    """Service factory (see :mod:`paseo.daemon.services`)."""
    return WorkspacesService(daemon)


def placement_of(daemon: Any) -> Placement:
    """The running daemon's :class:`Placement` (``daemon``: the daemon or an RPC context's)."""
    for service in daemon.services:
        if isinstance(service, WorkspacesService):
            return service.placement
    raise RuntimeError("the workspaces service is not running")


def provisioning_of(daemon: Any) -> WorkspaceProvisioningService:
    """The running daemon's :class:`WorkspaceProvisioningService`."""
    return placement_of(daemon).workspaces
