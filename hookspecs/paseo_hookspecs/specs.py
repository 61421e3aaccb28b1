"""The hook specifications.

Every hook is named ``paseo_*``, takes keyword arguments only, and returns ``None``: hooks hand
over objects through the ``register`` callable they receive, or observe events. The kernel calls
each implementation separately, so one failing plugin never stops the others.

``docs/plugins.md`` documents every hook and every argument; a test fails when it drifts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs import hookspec

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext
    from paseo_hookspecs.events import AgentEvent
    from paseo_hookspecs.mcp_tools import McpToolRegistrar
    from paseo_hookspecs.registration import (
        ClientConnectorRegistrar,
        CliRegistrar,
        ConfigSectionRegistrar,
        DoctorCheckRegistrar,
        PluginSourceRegistrar,
        ProviderRegistrar,
        RpcRegistrar,
        TransportRegistrar,
    )
    from paseo_hookspecs.schedules import ScheduleRunEnded, ScheduleTargetRegistrar
    from paseo_hookspecs.status import StatusSectionRegistrar


@hookspec
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Contribute agent providers.

    :param register: call ``register(provider)`` with each
        :class:`~paseo_hookspecs.interfaces.agent.AgentProvider`; the provider id must be unique.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_register_transports(register: TransportRegistrar) -> None:
    """Contribute transports that carry client connections to the daemon.

    :param register: call ``register(transport)`` with each
        :class:`~paseo_hookspecs.interfaces.transport.Transport`.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_register_client_connectors(register: ClientConnectorRegistrar) -> None:
    """Contribute connectors the kernel's client uses for ``--host`` values that are no
    address (the relay's offer URLs). Called only when the client meets such a value.

    :param register: call ``register(connector)`` with each
        :class:`~paseo_hookspecs.connectors.ClientConnector`; its ``name`` must be unique.
    :return: nothing.

    .. versionadded:: 2.0
    """


@hookspec
def paseo_register_plugin_sources(register: PluginSourceRegistrar) -> None:
    """Contribute managed plugin sources (where ``paseo plugins install`` fetches from).

    :param register: call ``register(source)`` with each
        :class:`~paseo_hookspecs.interfaces.source.PluginSource`; its ``kind`` must be unique.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_register_cli_commands(register: CliRegistrar) -> None:
    """Contribute ``paseo <group> …`` command groups.

    Called only when the user invokes a command the kernel does not know, so ``paseo --help``
    never imports a plugin.

    :param register: call ``register(group)`` with each
        :class:`~paseo_hookspecs.registration.CliCommandGroup`.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_register_rpc_methods(register: RpcRegistrar) -> None:
    """Contribute JSON-RPC method groups served by the daemon.

    :param register: call ``register(group)`` with each
        :class:`~paseo_hookspecs.registration.RpcMethodGroup`, or a
        :class:`~paseo_hookspecs.registration.LazyRpcMethodGroup` whose models and handlers are
        imported on its first call; method names must be new.
    :return: nothing.

    .. versionadded:: 0.1
    .. versionchanged:: 2.2 ``LazyRpcMethodGroup``.
    """


@hookspec
def paseo_register_config_sections(register: ConfigSectionRegistrar) -> None:
    """Declare the plugin's configuration section, stored at ``plugins.<pluginId>.settings``.

    :param register: call ``register(section)`` once with a
        :class:`~paseo_hookspecs.registration.ConfigSection`.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_register_doctor_checks(register: DoctorCheckRegistrar) -> None:
    """Contribute checks to ``paseo doctor``.

    Called in the ``paseo doctor`` process only (never by the daemon, never by ``paseo
    --help``), with the daemon stopped or running.

    :param register: call ``register(check)`` with each
        :class:`~paseo_hookspecs.doctor.DoctorCheck`.
    :return: nothing.

    .. versionadded:: 2.0
    """


@hookspec
def paseo_register_status_sections(register: StatusSectionRegistrar) -> None:
    """Contribute sections to ``paseo daemon status`` (``server.status``'s ``sections``).

    Called once in the daemon when plugins load.

    :param register: call ``register(section)`` with each
        :class:`~paseo_hookspecs.status.StatusSection`.
    :return: nothing.

    .. versionadded:: 2.0
    """


@hookspec
def paseo_register_mcp_tools(register: McpToolRegistrar) -> None:
    """Contribute tools to the daemon's MCP server for agents.

    Called once by the daemon when it starts, before ``paseo_startup``; the MCP server finds
    the tools on the daemon (:class:`~paseo_hookspecs.mcp_tools.McpToolSource`). A handler
    receives the calling agent's identity and the server's reach rules
    (:class:`~paseo_hookspecs.mcp_tools.McpToolScope`), never more.

    :param register: call ``register(tool)`` with each
        :class:`~paseo_hookspecs.mcp_tools.McpTool`; its name must be new.
    :return: nothing.

    .. versionadded:: 2.0
    """


@hookspec
def paseo_register_schedule_targets(register: ScheduleTargetRegistrar) -> None:
    """Contribute schedule targets beside ``agent`` and ``new-agent``.

    Called once by the daemon when it composes the schedules service; a schedule whose
    target ``type`` no loaded plugin offers is refused at create time, and its runs fail
    naming the type.

    :param register: call ``register(kind)`` with each
        :class:`~paseo_hookspecs.schedules.ScheduleTargetKind`; its ``type`` must be new.
    :return: nothing.

    .. versionadded:: 2.0
    """


@hookspec(historic=True)
def paseo_startup(context: DaemonContext) -> None:
    """The daemon has started: state is recovered and the store is open.

    Historic: a plugin registered later (for example after ``paseo plugins install``) is called
    on registration. Start background work here with ``asyncio.get_running_loop()``; keep the
    call itself quick.

    :param context: the running :class:`~paseo_hookspecs.context.DaemonContext`.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_shutdown(context: DaemonContext) -> None:
    """The daemon is shutting down; release what ``paseo_startup`` acquired.

    :param context: the running :class:`~paseo_hookspecs.context.DaemonContext`.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_agent_event(agent_id: str, provider: str, event: AgentEvent) -> None:
    """Observe every event an agent emits (event tap).

    Called synchronously on the daemon's loop for each event after it is recorded; must not
    block. A raising implementation is logged and skipped. Match on the event's class (or its
    ``type``); ``event.model_dump(mode="json", exclude_none=True)`` is the form it has in the
    timeline and on the wire. Treat it as read-only: it is the object the timeline holds.

    :param agent_id: the agent's id.
    :param provider: the provider id the agent runs on.
    :param event: the event, one of the typed models of
        :data:`paseo_hookspecs.events.AgentEvent` (``TurnCompleted``, ``Timeline``, …).
    :return: nothing.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
       ``event`` is the typed model, no longer a plain mapping.
    """


@hookspec
def paseo_attention(agent_id: str, reason: str, timestamp: str) -> None:
    """Observe an agent asking for attention (event tap), e.g. to send a push notification.

    :param agent_id: the agent's id.
    :param reason: ``finished``, ``error`` or ``permission``.
    :param timestamp: ISO 8601 time the attention was flagged.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def paseo_schedule_run_ended(run: ScheduleRunEnded) -> None:
    """Observe a scheduled run ending, succeeded or failed (event tap), e.g. to tell someone a
    run failed.

    Called on the daemon's loop once the run is recorded in the schedule's history; must not
    block. A raising implementation is logged and skipped. Runs the daemon ends itself (a stop,
    or a restart that finds a run in flight) are recorded failed but not observed here: they
    are the daemon's own doing, not the run's.

    :param run: the run, a :class:`~paseo_hookspecs.schedules.ScheduleRunEnded`.
    :return: nothing.

    .. versionadded:: 2.1
    """
