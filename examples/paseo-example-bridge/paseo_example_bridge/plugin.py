"""The hooks: the bridge's settings section, and its start and stop with the daemon."""

from __future__ import annotations

import asyncio

from paseo_hookspecs import hookimpl
from paseo_hookspecs.agents import Subscription
from paseo_hookspecs.context import DaemonContext
from paseo_hookspecs.registration import ConfigSection, ConfigSectionRegistrar

from paseo_example_bridge.bridge import Bridge
from paseo_example_bridge.settings import BridgeSettings, settings_of

PLUGIN_ID = "bridge"
"""The entry-point name: ``plugins.bridge.settings`` in config.json."""


class _Running:
    task: asyncio.Task[None] | None = None
    subscription: Subscription | None = None


RUNNING = _Running()


@hookimpl
def paseo_register_config_sections(register: ConfigSectionRegistrar) -> None:
    register(ConfigSection(BridgeSettings, "a folder bridged to agents"))


@hookimpl
def paseo_startup(context: DaemonContext) -> None:
    log = context.log.getChild(PLUGIN_ID)
    settings = settings_of(context.config_section(PLUGIN_ID))
    bridge = Bridge(context.agents, settings, home=context.home, log=log)
    RUNNING.subscription = context.agents.subscribe(bridge, name=PLUGIN_ID)
    RUNNING.task = asyncio.get_running_loop().create_task(bridge.run(), name="paseo-bridge")

    def stopped(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("the bridge stopped: %r", task.exception())

    RUNNING.task.add_done_callback(stopped)
    log.info("bridging %s to agents", bridge.folder)


@hookimpl
def paseo_shutdown(context: DaemonContext) -> None:
    if RUNNING.subscription is not None:
        RUNNING.subscription.close()
        RUNNING.subscription = None
    if RUNNING.task is not None:
        RUNNING.task.cancel()
        RUNNING.task = None
