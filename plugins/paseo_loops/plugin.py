"""Hook implementations of the loops plugin."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import CliCommandGroup, CliRegistrar, RpcRegistrar

from paseo_loops.rpc import Runtime, method_group

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext
    from paseo_hookspecs.mcp_tools import McpToolRegistrar
    from paseo_hookspecs.schedules import ScheduleTargetRegistrar

RUNTIME = Runtime()
_TASKS: set[asyncio.Task[None]] = set()


@hookimpl
def paseo_register_rpc_methods(register: RpcRegistrar) -> None:
    """``loop.run | list | inspect | logs | stop``."""
    register(method_group(RUNTIME))


@hookimpl
def paseo_register_mcp_tools(register: McpToolRegistrar) -> None:
    """``loop_run | loop_list | loop_inspect | loop_logs | loop_stop`` for agents."""
    from paseo_loops.tools import tools

    for tool in tools(RUNTIME):
        register(tool)


@hookimpl
def paseo_register_schedule_targets(register: ScheduleTargetRegistrar) -> None:
    """The ``loop`` target: each fire of the schedule starts a loop."""
    from paseo_loops.schedule_target import kind

    register(kind(RUNTIME))


@hookimpl
def paseo_register_cli_commands(register: CliRegistrar) -> None:
    """``paseo loop run | ls | inspect | logs | stop``."""
    from paseo_loops.cli import configure

    register(CliCommandGroup("loop", "Repeat a worker agent until checks pass", configure))


@hookimpl
def paseo_startup(context: DaemonContext) -> None:
    """Load the loops (from the store; an earlier ``loops/loops.json`` is moved into it) and
    resume those a stop or crash left running."""
    from paseo_loops.service import LoopService
    from paseo_loops.store import COLLECTION, NAMESPACE

    records = context.plugin_records(NAMESPACE, COLLECTION)
    RUNTIME.begin(LoopService(records, context.agents, legacy_home=context.home))


@hookimpl
def paseo_shutdown(context: DaemonContext) -> None:
    """Cancel the loop tasks; running loops stay ``running`` on disk and resume next start."""
    service = RUNTIME.end()
    if service is not None:
        service.cancel()  # at once, before the kernel stops the agents: see LoopService.cancel
        task = asyncio.get_running_loop().create_task(service.close())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)
