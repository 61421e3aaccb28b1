"""Hook implementations of the Hub relationship plugin."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import (
    CliCommandGroup,
    CliRegistrar,
    ConfigSection,
    ConfigSectionRegistrar,
    DoctorCheckRegistrar,
    RpcRegistrar,
)

from paseo_hub.rpc import Runtime, method_group

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext

PLUGIN_ID = "hub"
RUNTIME = Runtime()
_TASKS: set[asyncio.Task[None]] = set()


@hookimpl
def paseo_register_rpc_methods(register: RpcRegistrar) -> None:
    """``hub.relationship.connect | get_status | disconnect``."""
    register(method_group(RUNTIME))


@hookimpl
def paseo_register_cli_commands(register: CliRegistrar) -> None:
    """``paseo hub connect | status | disconnect``."""
    from paseo_hub.cli import configure

    register(CliCommandGroup("hub", "Connect this daemon to a Paseo Hub", configure))


@hookimpl
def paseo_register_doctor_checks(register: DoctorCheckRegistrar) -> None:
    """``paseo doctor``: the relationship and its record's permissions."""
    from paseo_hookspecs.doctor import DoctorCheck

    from paseo_hub.doctor import check

    register(DoctorCheck("hub", check))


@hookimpl
def paseo_register_config_sections(register: ConfigSectionRegistrar) -> None:
    """Timings live at ``plugins.hub.settings`` in config.json."""
    from paseo_hub.settings import HubSettings

    register(ConfigSection(HubSettings, "Paseo Hub relationship timings"))


@hookimpl
def paseo_startup(context: DaemonContext) -> None:
    """Pre-approve granted tools, load the relationship and resume it (enrolling, dialling or
    revoking)."""
    from paseo_hub.agents import SUBSCRIBER, HubAgents
    from paseo_hub.preapproval import PreApprover
    from paseo_hub.service import HubService
    from paseo_hub.settings import HubSettings

    section = context.config_section(PLUGIN_ID)
    settings = section if isinstance(section, HubSettings) else HubSettings()
    agents = context.agents
    # Whether or not a Hub is reachable: an owned agent resumed meanwhile still gets its grants.
    RUNTIME.preapproval = agents.subscribe(PreApprover(agents), name=f"{SUBSCRIBER}.preapproval")
    service = HubService(
        context.home,
        HubAgents(agents, context.providers),
        server_id=context.server_id,
        version=context.version,
        settings=settings,
    )
    RUNTIME.service = service
    # Here, not in the task: an RPC (`hub.connect`) may write before the task runs its sweep.
    service.sweep()
    task = asyncio.get_running_loop().create_task(service.start())
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


@hookimpl
def paseo_shutdown(context: DaemonContext) -> None:
    """Stop observing agents, close the Hub socket; the relationship stays on disk for the
    next start. The kernel calls this before it stops agents, so the turns the shutdown
    interrupts keep their resume intents (their cancellation is never seen)."""
    preapproval, RUNTIME.preapproval = RUNTIME.preapproval, None
    if preapproval is not None:
        preapproval.close()
    service, RUNTIME.service = RUNTIME.service, None
    if service is not None:
        service.detach()  # at once, before the kernel stops agents: see HubService.detach
        task = asyncio.get_running_loop().create_task(service.stop())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)
