"""The scripts service: a workspace's ``paseo.json`` scripts, and its services supervised.

A workspace is named by a directory (placed the way terminals and agents are). Its scripts are
read from the working copy's ``paseo.json`` at the checkout root at the moment of use. A plain
script is resolved (command, cwd, environment) for the CLI, which runs it in the foreground
and exits with its status. A service is spawned by the daemon (:mod:`paseo.scripts.supervisor`)
and recorded as a ``ManagedProcessRecord`` of kind :data:`PROCESS_KIND` before anything talks
to it, so the next boot reaps what a crashed daemon left behind; the daemon stops every
service when it stops.

Every service of a workspace has a port for the daemon's lifetime: the one ``paseo.json``
names, else a free one the operating system picks (so copies of one service in several
worktrees coexist). Each service sees ``PASEO_PORT``/``PASEO_URL`` and, for every service of
its workspace, ``PASEO_SERVICE_<NAME>_PORT``/``_URL``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.http import Forward
from paseo_hookspecs.records import ProjectRecord, WorkspaceRecord
from paseo_hookspecs.store import ManagedProcessRepository

from paseo.processes import ProcessRecords, reap_orphans, reap_recorded_group
from paseo.scripts.proxy import proxied_name, proxy_host
from paseo.worktrees.checkout import read_file
from paseo.worktrees.project_config import CONFIG_FILE, ProjectConfig, Script, parse_project_config

if TYPE_CHECKING:
    # The supervisor is imported by the first service started: a daemon that runs none never
    # loads it.
    from paseo.scripts.supervisor import BoundedLog, ServiceProcess

PROCESS_KIND = "script-service"
STOP_TIMEOUT = 15.0


class ScriptPlacement(Protocol):
    """Where a directory belongs (the workspaces service offers this)."""

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord: ...


@dataclass(frozen=True)
class ScriptInfo:
    name: str
    type: str
    command: str
    status: str | None
    port: int | None
    url: str | None
    exitCode: int | None
    pid: int | None
    proxyHost: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def env_name(name: str) -> str:
    """``PASEO_SERVICE_<NAME>``'s ``<NAME>``: upper-cased, non-alphanumerics → ``_``."""
    return re.sub(r"[^A-Z0-9]", "_", name.upper())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _url(port: int) -> str:
    return f"http://127.0.0.1:{port}"


class ScriptService:
    """See the module docstring."""

    name = "scripts"

    def __init__(
        self,
        *,
        placement: ScriptPlacement,
        projects: Callable[[str], Awaitable[ProjectRecord]],
        managed_processes: ManagedProcessRepository,
        on_status: Callable[[str, str], None] = lambda _workspace_id, _name: None,
    ) -> None:
        self._on_status = on_status
        """Told ``(workspace id, service)`` when a service starts, answers on its port or
        exits (the ``script.changed`` notification)."""
        self._placement = placement
        self._projects = projects
        self._hosts: dict[str, tuple[str, str]] = {}
        """Proxy name → ``(workspace id, service)``, learnt as services are listed or started."""
        self._repository = managed_processes
        self._records = ProcessRecords(managed_processes, kind=PROCESS_KIND, provider="paseo")
        self._ports: dict[tuple[str, str], int] = {}
        self._runs: dict[tuple[str, str], ServiceProcess] = {}
        self._record_ids: dict[int, str] = {}
        self._logs: dict[tuple[str, str], BoundedLog] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    # -------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Reap services a crashed daemon left behind."""
        await reap_orphans(self._repository, PROCESS_KIND, reap_recorded_group)

    async def stop(self) -> None:
        """Stop every service and wait (bounded) until their groups are reaped."""
        runs = list(self._runs.values())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(run.stop() for run in runs), return_exceptions=True),
                STOP_TIMEOUT,
            )

    async def stop_workspace(self, workspace_id: str) -> None:
        """Stop the services of one workspace (it is being archived)."""
        runs = [run for (wid, _), run in self._runs.items() if wid == workspace_id]
        await asyncio.gather(*(run.stop() for run in runs), return_exceptions=True)

    # ---------------------------------------------------------------- reading

    async def _workspace(self, cwd: str) -> WorkspaceRecord:
        return await self._placement.ensure_workspace_for_cwd(cwd)

    @staticmethod
    def _require_trusted(workspace: WorkspaceRecord) -> None:
        source = workspace.untrustedSource
        if source is not None:
            raise Conflict(
                f"workspace {workspace.workspaceId} is a change request from "
                f"{source.headRepository}: its paseo.json does not run until you allow it "
                f"with `paseo worktree trust {workspace.workspaceId}`",
                data={"workspaceId": workspace.workspaceId, "reason": "untrusted_source"},
            )

    @staticmethod
    def _root(workspace: WorkspaceRecord) -> str:
        return workspace.worktreeRoot or workspace.cwd

    async def _config(self, workspace: WorkspaceRecord) -> ProjectConfig:
        path = os.path.join(self._root(workspace), CONFIG_FILE)
        return parse_project_config(await asyncio.to_thread(read_file, path), path=path)

    async def _script(self, workspace: WorkspaceRecord, name: str) -> Script:
        config = await self._config(workspace)
        script = config.script(name)
        if script is None:
            known = ", ".join(s.name for s in config.scripts) or "none"
            raise NotFound(
                f"no script {name!r} in {os.path.join(self._root(workspace), CONFIG_FILE)} "
                f"(scripts: {known})",
                data={"script": name},
            )
        return script

    def _port(self, workspace_id: str, script: Script) -> int:
        key = (workspace_id, script.name)
        if script.port is not None:
            return script.port
        if key not in self._ports:
            taken = set(self._ports.values())
            port = _free_port()
            while port in taken:
                port = _free_port()
            self._ports[key] = port
        return self._ports[key]

    def _base_env(self, workspace: WorkspaceRecord) -> dict[str, str]:
        root = self._root(workspace)
        return {
            "PASEO_SOURCE_CHECKOUT_PATH": workspace.mainRepoRoot or root,
            "PASEO_ROOT_PATH": workspace.mainRepoRoot or root,
            "PASEO_WORKTREE_PATH": root,
            "PASEO_BRANCH_NAME": workspace.branch or "",
        }

    def _service_env(
        self, workspace: WorkspaceRecord, config: ProjectConfig, script: Script | None
    ) -> dict[str, str]:
        env = self._base_env(workspace)
        for service in config.services:
            port = self._port(workspace.workspaceId, service)
            env[f"PASEO_SERVICE_{env_name(service.name)}_PORT"] = str(port)
            env[f"PASEO_SERVICE_{env_name(service.name)}_URL"] = _url(port)
        if script is not None and script.type == "service":
            port = self._port(workspace.workspaceId, script)
            env["PASEO_PORT"] = str(port)
            env["PASEO_URL"] = _url(port)
        return env

    async def _learn_hosts(self, workspace: WorkspaceRecord, config: ProjectConfig) -> None:
        try:
            project = await self._projects(workspace.projectId)
        except NotFound:
            return
        name = project.customName or project.displayName
        for service in config.services:
            host = proxy_host(service.name, workspace.branch, name)
            self._hosts[host] = (workspace.workspaceId, service.name)

    def _host_of(self, workspace_id: str, name: str) -> str | None:
        return next((h for h, key in self._hosts.items() if key == (workspace_id, name)), None)

    def route(self, host_header: str) -> Forward:
        """The proxy's decision for a connection (:mod:`paseo.scripts.proxy`)."""
        name = proxied_name(host_header)
        if name is None:
            return None
        key = self._hosts.get(name)
        if key is None:
            return 404
        run = self._runs.get(key)
        if run is None or run.status not in ("starting", "running"):
            return 503
        return ("127.0.0.1", run.port)

    def _info(self, workspace_id: str, script: Script) -> ScriptInfo:
        if script.type != "service":
            return ScriptInfo(script.name, "script", script.command, None, None, None, None, None)
        run = self._runs.get((workspace_id, script.name))
        port = run.port if run else self._port(workspace_id, script)
        return ScriptInfo(
            name=script.name,
            type="service",
            command=script.command,
            status=run.status if run else "stopped",
            port=port,
            url=_url(port),
            exitCode=run.exit_code if run else None,
            pid=run.pid if run and run.status in ("starting", "running") else None,
            proxyHost=self._host_of(workspace_id, script.name),
        )

    async def list(self, cwd: str) -> tuple[WorkspaceRecord, list[ScriptInfo]]:
        workspace = await self._workspace(cwd)
        config = await self._config(workspace)
        await self._learn_hosts(workspace, config)
        return workspace, [self._info(workspace.workspaceId, s) for s in config.scripts]

    async def resolve(self, cwd: str, name: str) -> dict[str, Any]:
        """What running plain script ``name`` takes: its command, cwd and environment."""
        workspace = await self._workspace(cwd)
        self._require_trusted(workspace)
        script = await self._script(workspace, name)
        config = await self._config(workspace)
        env = self._service_env(workspace, config, script)
        return {
            "workspaceId": workspace.workspaceId,
            "script": self._info(workspace.workspaceId, script).to_json(),
            "command": script.command,
            "cwd": workspace.cwd,
            "env": env,
        }

    # --------------------------------------------------------------- services

    def _lock(self, key: tuple[str, str]) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def _service(self, cwd: str, name: str) -> tuple[WorkspaceRecord, Script]:
        workspace = await self._workspace(cwd)
        script = await self._script(workspace, name)
        if script.type != "service":
            raise Conflict(
                f"{name!r} is a plain script, not a service: run it with `paseo script run`",
                data={"script": name},
            )
        return workspace, script

    async def start_service(self, cwd: str, name: str) -> ScriptInfo:
        workspace, script = await self._service(cwd, name)
        key = (workspace.workspaceId, name)
        self._require_trusted(workspace)
        async with self._lock(key):
            return await self._start_locked(workspace, script)

    async def _start_locked(self, workspace: WorkspaceRecord, script: Script) -> ScriptInfo:
        key = (workspace.workspaceId, script.name)
        run = self._runs.get(key)
        if run is not None and run.status in ("starting", "running"):
            return self._info(workspace.workspaceId, script)
        config = await self._config(workspace)
        await self._learn_hosts(workspace, config)
        env = self._service_env(workspace, config, script)
        from paseo.scripts.supervisor import BoundedLog, ServiceProcess

        log = self._logs.setdefault(key, BoundedLog())
        run = await ServiceProcess.spawn(
            script.command,
            cwd=workspace.cwd,
            env=env,
            port=self._port(workspace.workspaceId, script),
            log=log,
            on_change=functools.partial(self._on_status, *key),
            on_exit=self._exited,
        )
        self._runs[key] = run
        self._on_status(*key)
        record_id = await self._records.record(
            run.pid,
            ["/bin/sh", "-c", script.command],
            {"workspaceId": workspace.workspaceId, "script": script.name, "port": run.port},
        )
        if record_id is not None:
            self._record_ids[run.pid] = record_id
        return self._info(workspace.workspaceId, script)

    async def _exited(self, run: ServiceProcess) -> None:
        record_id = self._record_ids.pop(run.pid, None)
        if record_id is not None:
            await self._records.forget(record_id)

    async def stop_service(self, cwd: str, name: str) -> ScriptInfo:
        workspace, script = await self._service(cwd, name)
        key = (workspace.workspaceId, name)
        async with self._lock(key):
            run = self._runs.get(key)
            if run is not None:
                await run.stop()
            return self._info(workspace.workspaceId, script)

    async def restart_service(self, cwd: str, name: str) -> ScriptInfo:
        workspace, script = await self._service(cwd, name)
        key = (workspace.workspaceId, name)
        self._require_trusted(workspace)
        async with self._lock(key):
            run = self._runs.get(key)
            if run is not None:
                await run.stop()
            return await self._start_locked(workspace, script)

    async def logs(self, cwd: str, name: str, since: int = 0) -> dict[str, Any]:
        workspace, script = await self._service(cwd, name)
        log = self._logs.get((workspace.workspaceId, name))
        info = self._info(workspace.workspaceId, script)
        return {
            "text": log.since(since) if log else "",
            "offset": log.end if log else 0,
            "script": info.to_json(),
        }
