"""The composition root: the one place that knows every kernel service, its RPC adapter and
the plugin method groups.

:func:`compose` builds one daemon run — each service from exactly the ports it needs (the store,
the :class:`~paseo.daemon.publisher.ForwardingPublisher`, the live
:class:`~paseo.services.ConfigView`, the other services it uses), each adapter's
:class:`~paseo.services.ServiceRef` bound to its service — and :func:`schema_groups` /
:func:`schema_notifications` give the protocol schema generator every method group and
notification without a running daemon (with unbound refs).

Start order: git (the one Git runner), workspaces (placement), agents (needs placement),
metadata (runs internal agents; stops before them), schedules (prompt agents), checkpoints
(observe turns through the agent port), trash (restores into and waits on the agents; a purge
tells the checkpoints).
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paseo_hookspecs.registration import LazyRpcMethodGroup, RpcMethodStub

from paseo.daemon.method_index import INDEX
from paseo.daemon.methods import kernel_groups
from paseo.daemon.publisher import ForwardingPublisher
from paseo.daemon.services import Composition
from paseo.git.service import GitService
from paseo.services import Publisher, ServiceRef
from paseo.workspaces.service import WorkspacesService
from paseo.worktrees.terminals import close_terminals, open_worktree_terminals

if TYPE_CHECKING:
    from paseo_hookspecs.records import WorkspaceRecord
    from paseo_hookspecs.registration import RpcMethodGroup
    from paseo_hookspecs.terminals import TerminalProfile
    from pydantic import BaseModel

    from paseo.agents.manager import AgentService
    from paseo.agents.port.subscribers import AgentSubscribers
    from paseo.daemon.runtime import Daemon
    from paseo.daemon.services import Service
    from paseo.workspaces.adapter import WorkspacesRef
    from paseo.workspaces.git_rpc import GitDesk

KERNEL = "kernel"
"""The owner recorded for the daemon's and the services' method groups."""

STREAM_ACCESS = frozenset({"local", "remote"})


def _workspace_groups(ref: WorkspacesRef) -> list[RpcMethodGroup]:
    from paseo.workspaces.project_rpc import project_group
    from paseo.workspaces.rpc import label_group, workspace_group
    from paseo.workspaces.worktree_rpc import worktree_group

    return [project_group(ref), workspace_group(ref), worktree_group(ref), label_group(ref)]


def _git_group(ref: ServiceRef[GitDesk]) -> RpcMethodGroup:
    from paseo.workspaces.git_rpc import git_group

    return git_group(ref)


def _lazy(source: str, build: Callable[[], list[RpcMethodGroup]]) -> list[LazyRpcMethodGroup]:
    """``source``'s method groups entered from :data:`~paseo.daemon.method_index.INDEX`;
    ``build`` (which imports their models and handlers) runs on the first call of any of them.

    Registering every group's models cost an empty start some megabytes for methods most
    starts never see called (docs/performance.md, the empty daemon's start).
    """
    built: list[RpcMethodGroup] = []

    def load(area: str) -> RpcMethodGroup:
        if not built:
            built.extend(build())
        for group in built:
            if group.area == area:
                return group
        raise LookupError(f"{source} builds no {area!r} method group")

    return [
        LazyRpcMethodGroup(
            area,
            [RpcMethodStub(name, access) for name, access in methods],
            functools.partial(load, area),
        )
        for area, methods in INDEX[source].items()
    ]


def _lazy_adapter(name: str, service: object) -> list[LazyRpcMethodGroup]:
    return _lazy(name, functools.partial(_adapter, name, service))


def compose(daemon: Daemon) -> Composition:
    """Build every kernel service and method group of ``daemon`` (plugins loaded, store open)."""
    publisher = ForwardingPublisher()
    publisher.register_stream("config", STREAM_ACCESS)
    config = daemon.live_config
    store = daemon.store
    composition = Composition(publisher)

    daemon_ref: ServiceRef[Daemon] = ServiceRef("daemon")
    daemon_ref.bind(daemon)
    composition.groups.extend(
        (KERNEL, group) for group in kernel_groups(daemon_ref, publisher.declare)
    )

    git = GitService(config)

    async def branch_name(description: str, cwd: str) -> str | None:
        # The metadata service names branches with an internal agent, so it is built after
        # the agents, which need placement: resolved when a worktree is created, never before
        # the daemon runs.
        return await metadata.branch_name(description, cwd)

    async def before_archive(workspace_id: str) -> None:
        # What runs in a worktree stops before it is removed: its services, then its agents
        # (never left running in a deleted directory). Both rooms are built after placement:
        # resolved when a worktree is archived, never before the daemon runs.
        await scripts.stop_workspace(workspace_id)
        await agents.close_in_workspace(workspace_id, reason="worktree archived")
        await close_terminals(terminals, workspace_id)

    async def after_create(workspace: WorkspaceRecord) -> None:
        # A new (or newly trusted) worktree's `worktree.terminals` open in it; the terminals
        # room is built after placement: resolved when a worktree is created.
        await open_worktree_terminals(terminals, workspace)

    workspaces = WorkspacesService(
        store=store,
        publisher=publisher,
        config=config,
        git=git.runner,
        home=daemon.home,
        branch_namer=branch_name,
        before_archive=before_archive,
        after_create=after_create,
    )
    workspaces_ref: WorkspacesRef = ServiceRef("workspaces")
    workspaces_ref.bind(workspaces)
    composition.groups.extend(
        (KERNEL, group)
        for group in _lazy("workspaces", functools.partial(_workspace_groups, workspaces_ref))
    )

    def git_groups() -> list[RpcMethodGroup]:
        # `git.*`: checkouts' status, diffs and changes, through the one runner and `gh`.
        from paseo.workspaces.git_rpc import GitDesk

        git_ref: ServiceRef[GitDesk] = ServiceRef("git")
        git_ref.bind(GitDesk(git.runner, lambda: git.github, workspaces.placement))
        return [_git_group(git_ref)]

    composition.groups.extend((KERNEL, group) for group in _lazy("git", git_groups))

    from paseo.agents.port.control import KernelAgents
    from paseo.agents.port.subscribers import AgentSubscribers
    from paseo.workspaces.targets import WorktreeTargets

    # The agent port's subscribers: one of the listeners of the agent service's typed feed.
    events = AgentSubscribers()
    agents = _agents(daemon, publisher=publisher, placement=workspaces, events=events)
    composition.agents = KernelAgents(agents, events, WorktreeTargets(workspaces))
    from paseo.agents.live import AGENT_STREAM_PREFIX

    # An agent's stream exists once the agent is loaded; subscribing loads it.
    publisher.on_demand(AGENT_STREAM_PREFIX, agents.declare_stream)
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("agents", agents))

    from paseo.metadata.agents_port import AgentServicePort as MetadataAgentsPort
    from paseo.metadata.service import MetadataService
    from paseo.metadata.titles import FirstPromptTitles

    # Titles for untitled agents and names for new branches, by an internal agent.
    metadata_agents = MetadataAgentsPort(agents)
    metadata = MetadataService(
        agents=metadata_agents,
        config=config,
        git=git.runner,
        paths=lambda raw, kind: workspaces.placement.workspaces.check_path(raw, session_kind=kind),
    )
    # It hears of first prompts through the agent port: the agents need no reference to it.
    events.subscribe(
        FirstPromptTitles(metadata_agents.untitled_cwd, metadata.request_title), name="titles"
    )
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("metadata", metadata))

    from paseo.schedules.agents_port import AgentServicePort
    from paseo.schedules.service import ScheduleService
    from paseo.schedules.targets import PluginTargets

    targets = PluginTargets(daemon.plugins.schedule_targets() if daemon.plugins else None)
    schedules = ScheduleService(
        store=store,
        publisher=publisher,
        agents=AgentServicePort(lambda: agents),
        config=config,
        targets=targets,
        on_run_ended=daemon.plugins.schedule_run_ended if daemon.plugins else None,
    )
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("schedules", schedules))

    from paseo.checkpoints.service import CheckpointService

    # Turn checkpoints observe the agent port's events; a purge removes an agent's refs.
    checkpoints = CheckpointService(
        runner=git.runner, agents=composition.agents, config=config, home=daemon.home
    )
    composition.groups.extend(
        (KERNEL, group) for group in _lazy_adapter("checkpoints", checkpoints)
    )

    from paseo.trash.service import TrashService

    trash = TrashService(
        store=store,
        config=config,
        agents=agents,
        home=daemon.home,
        purge_listeners=[checkpoints.purge],
        # A restored agent gets back its workspace and project if they were archived meanwhile,
        # and the schedules that paused because it was deleted resume.
        restore_listeners=[
            lambda record: workspaces.restore_for_agent(record.workspaceId),
            lambda record: schedules.agent_restored(record.id),
        ],
    )
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("trash", trash))

    from paseo.usage.service import UsageService

    usage = UsageService(store=store, agents=agents)
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("usage", usage))

    from paseo.skills.service import SkillsService

    # `~` is the daemon's HOME, as the agents it launches see it.
    env = daemon.options.env
    skills = SkillsService(config=config, home_dir=Path(env.get("HOME") or os.path.expanduser("~")))
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("skills", skills))

    from paseo.terminals.service import TerminalService

    plugins = daemon.plugins

    def provider_profiles() -> list[TerminalProfile]:
        providers = plugins.providers().values() if plugins is not None else ()
        return [p for p in (provider.terminal_profile() for provider in providers) if p]

    terminals = TerminalService(
        store=store,
        publisher=publisher,
        config=config,
        placement=workspaces,
        profiles=provider_profiles,
        # A workspace's derived status follows its terminals' activity.
        on_activity=workspaces.activity.terminals,
    )
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("terminals", terminals))

    from paseo.scripts.service import ScriptService

    scripts = ScriptService(
        placement=workspaces,
        projects=workspaces.placement.projects.get,
        managed_processes=store.managed_processes,
        # A service's status is part of its workspace's sidebar entry: told on that stream.
        on_status=lambda workspace_id, name: publisher.publish(
            "workspaces", "script.changed", {"workspaceId": workspace_id, "script": name}
        ),
    )
    composition.forward = scripts.route
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("scripts", scripts))
    # A workspace's services stop before it is archived and its checkout torn down.

    from paseo.files.service import FilesService

    async def readable_roots() -> list[str]:
        # What a client may read below: every workspace's directory and checkout, every
        # project's root (archived ones are gone from the sidebar: not readable).
        rows = await workspaces.placement.workspaces.list()
        roots = [r for w in rows for r in (w.cwd, w.worktreeRoot) if r]
        return roots + [p.rootPath for p in await workspaces.placement.projects.list()]

    files = FilesService(
        roots=readable_roots,
        home=str(Path(env.get("HOME") or os.path.expanduser("~"))),
        http_url=daemon.http_url,
        mount=daemon.mount_http,
        path_env=env.get("PATH"),
    )
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("files", files))

    from paseo.plugins.drivers import load_driver
    from paseo.speech.agents_port import AgentServiceVoicePort
    from paseo.speech.service import SpeechService

    speech = SpeechService(config, load_driver, agents=AgentServiceVoicePort(lambda: agents))
    composition.groups.extend((KERNEL, group) for group in _lazy_adapter("speech", speech))
    # Voice mode approves its agents' `speak` requests.
    events.subscribe(speech.voice, name="voice")
    # A workspace's derived status follows its agents' records (the internal ones' too: their
    # turns run in workspaces as well).
    events.subscribe(workspaces.activity, name="workspace-status", include_internal=True)
    from paseo.agents.catalog import KernelProviderCatalog
    from paseo.daemon.services import PluginPorts
    from paseo.schedules.port import KernelSchedules
    from paseo.speech.voice_port import KernelVoice
    from paseo.terminals.port import KernelTerminals
    from paseo.workspaces.worktree_port import KernelWorktrees

    composition.plugin_ports = PluginPorts(
        providers=KernelProviderCatalog(agents),
        schedules=KernelSchedules(schedules),
        worktrees=KernelWorktrees(workspaces.placement),
        terminals=KernelTerminals(terminals),
        voice=KernelVoice(speech.voice),
    )

    services: list[Service] = [
        git,
        workspaces,
        events,  # stops after the agents: what they say while stopping is still delivered
        agents,
        metadata,
        schedules,
        checkpoints,
        trash,
        skills,
        terminals,
        scripts,
        files,
        speech,
    ]
    composition.services.extend(services)
    if daemon.plugins is not None:
        composition.groups.extend(daemon.plugins.rpc_method_groups())
    return composition


def _agents(
    daemon: Daemon,
    *,
    publisher: Publisher,
    placement: WorkspacesService,
    events: AgentSubscribers,
) -> AgentService:
    """The agent manager from its ports."""
    from paseo.agents.environments import AgentEnvironments
    from paseo.agents.manager import AgentService

    plugins = daemon.plugins
    if plugins is None:  # cannot happen: compose() runs after the plugins are loaded
        raise RuntimeError("the plugins are not loaded")
    return AgentService(
        store=daemon.store,
        publisher=publisher,
        config=daemon.live_config,
        plugins=plugins,
        placement=placement,
        environments=AgentEnvironments(daemon.home / "agent-env"),
        listeners=[events],
        redactor=daemon.redactor,
        worktree_setup=placement.placement.setup.claim,
    )


# ------------------------------------------------------------------------------ adapters

ADAPTERS: dict[str, str] = {
    "agents": "paseo.agents.rpc",
    "metadata": "paseo.metadata.rpc",
    "schedules": "paseo.schedules.rpc",
    "checkpoints": "paseo.checkpoints.rpc",
    "trash": "paseo.trash.rpc",
    "usage": "paseo.usage.rpc",
    "skills": "paseo.skills.rpc",
    "terminals": "paseo.terminals.rpc",
    "scripts": "paseo.scripts.rpc",
    "speech": "paseo.speech.rpc",
    "files": "paseo.files.rpc",
}
"""Service name -> the module of its RPC adapter. Each adapter module offers
``method_groups(ref: ServiceRef[S])`` and ``notifications()``; it is imported when its service is
built (or when the schema is generated), never by the CLI."""


def _adapter(name: str, service: object | None) -> list[RpcMethodGroup]:
    """The method groups of ``name``'s adapter, with its ref bound to ``service`` (unbound when
    ``None``: the schema generator's case)."""
    module = importlib.import_module(ADAPTERS[name])
    ref: ServiceRef[object] = ServiceRef(name)
    if service is not None:
        ref.bind(service)
    groups: list[RpcMethodGroup] = module.method_groups(ref)
    return groups


# ------------------------------------------------------------------------------ schema


def lazy_sources() -> dict[str, list[RpcMethodGroup]]:
    """The method groups a daemon loads on first call, by source (the keys of
    :data:`~paseo.daemon.method_index.INDEX`), built with unbound refs."""
    sources = {
        "workspaces": _workspace_groups(ServiceRef("workspaces")),
        "git": [_git_group(ServiceRef("git"))],
    }
    sources.update((name, _adapter(name, None)) for name in ADAPTERS)
    return sources


def schema_groups() -> list[RpcMethodGroup]:
    """The daemon's and every kernel service's method groups, built with unbound refs (their
    handlers answer ``unavailable``): what the protocol schema documents."""
    groups = kernel_groups(ServiceRef("daemon"))
    for built in lazy_sources().values():
        groups.extend(built)
    return groups


def schema_notifications() -> dict[str, type[BaseModel]]:
    """Every notification the kernel sends (method → params model)."""
    from paseo.rpc.models import NOTIFICATIONS as WIRE_NOTIFICATIONS
    from paseo.workspaces.rpc import notifications as workspace_notifications

    found: dict[str, type[BaseModel]] = {**WIRE_NOTIFICATIONS, **workspace_notifications()}
    for module_name in ADAPTERS.values():
        found.update(importlib.import_module(module_name).notifications())
    return found


def builtin_plugin_groups() -> list[RpcMethodGroup]:
    """The RPC method groups of the built-in plugins (loaded through their entry points)."""
    from paseo.plugins import LoadPolicy, PaseoPluginManager

    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.load_all()
    builtin = {record.name for record in manager.records if record.builtin}
    return [
        group.load() if isinstance(group, LazyRpcMethodGroup) else group
        for owner, group in manager.rpc_method_groups()
        if owner in builtin
    ]
