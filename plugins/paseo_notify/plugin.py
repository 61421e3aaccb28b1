"""The notify plugin's hooks: its settings, the ``notify.status`` method, the attention observer.

It watches attention through the agent port (``AgentEvents.subscribe``): the observer runs in
its own task with its own bounded queue, so building a notification (reading the record, the
last reply) never holds up an agent; handing it to the sinks is a ``put_nowait`` each. Failed
scheduled runs come from the ``paseo_schedule_run_ended`` tap, their notification built from
the run alone (no read), so the tap returns at once.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo_hookspecs import hookimpl
from paseo_hookspecs.agents import AgentObserver, Subscription
from paseo_hookspecs.doctor import DoctorCheck
from paseo_hookspecs.notifications import NotificationSinkSource
from paseo_hookspecs.registration import (
    ConfigSection,
    ConfigSectionRegistrar,
    DoctorCheckRegistrar,
    RpcMethod,
    RpcMethodGroup,
    RpcRegistrar,
)
from paseo_hookspecs.schedules import ScheduleRunEnded
from paseo_hookspecs.status import StatusReport, StatusSection, StatusSectionRegistrar
from pydantic import BaseModel, ConfigDict

from paseo_notify import health
from paseo_notify import payload as payloads
from paseo_notify.delivery import SinkWorker
from paseo_notify.health import doctor_findings
from paseo_notify.secret import SecretFileError, load_or_create
from paseo_notify.settings import (
    CommandSink,
    NotifySettings,
    NtfySink,
    WebhookSink,
    settings_of,
)
from paseo_notify.transports import post_ntfy, post_webhook, run_command

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Agents
    from paseo_hookspecs.context import DaemonContext, RpcContext

PLUGIN_ID = "notify"

log = logging.getLogger("paseo.plugins.notify")


class NotifyStatusParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class NotifySinkStatus(BaseModel):
    # Built on the first `notify.status` answer, not at start.
    model_config = ConfigDict(defer_build=True)

    name: str
    type: str
    events: list[str]
    disabled: str | None
    queued: int
    sent: int
    failed: int
    dropped: int
    retried: int
    lastError: str | None
    lastErrorAt: str | None
    lastSentAt: str | None


class NotifyStatusResult(BaseModel):
    model_config = ConfigDict(defer_build=True)

    enabled: bool
    sinks: list[NotifySinkStatus]


def _encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()


def _worker(index: int, sink: WebhookSink | NtfySink | CommandSink, home: Path) -> SinkWorker:
    name = sink.name or f"{sink.type}-{index + 1}"
    disabled: str | None = None
    deliver: Any
    if isinstance(sink, WebhookSink):
        secret: bytes | None = None
        if sink.secretFile:
            path = Path(sink.secretFile).expanduser()
            path = path if path.is_absolute() else home / path
            try:
                secret = load_or_create(path)
            except SecretFileError as error:
                disabled = str(error)

        async def deliver(p: dict[str, Any], sink: WebhookSink = sink) -> None:
            await post_webhook(sink, _encode(p), secret)

    elif isinstance(sink, NtfySink):

        async def deliver(p: dict[str, Any], sink: NtfySink = sink) -> None:
            text = f"{p['reasonText']}: {p['summary']}" if p["summary"] else p["reasonText"]
            await post_ntfy(sink, p["title"], text, urgent=p["event"] == "permission")

    else:

        async def deliver(p: dict[str, Any], sink: CommandSink = sink) -> None:
            await run_command(sink, _encode(p))

    return SinkWorker(
        name=name,
        type=sink.type,
        events=frozenset(sink.events),
        deliver=deliver,
        retries=sink.retries,
        backoff=sink.backoff,
        queue_size=sink.queueSize,
        disabled=disabled,
    )


class _Attention(AgentObserver):
    def __init__(self, plugin: NotifyPlugin, agents: Agents, server_id: str) -> None:
        self.plugin = plugin
        self.agents = agents
        self.server_id = server_id

    async def on_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        await self.plugin.attention(self.agents, self.server_id, agent_id, reason, timestamp)


class NotifyPlugin:
    """The plugin object (the entry point names :data:`plugin`)."""

    def __init__(self) -> None:
        self.settings = NotifySettings()
        self.workers: list[SinkWorker] = []
        self._subscription: Subscription | None = None
        self._server_id = ""

    @hookimpl
    def paseo_register_config_sections(self, register: ConfigSectionRegistrar) -> None:
        register(ConfigSection(NotifySettings, "Notification sinks: webhook, ntfy, command"))

    @hookimpl
    def paseo_register_rpc_methods(self, register: RpcRegistrar) -> None:
        register(
            RpcMethodGroup(
                "notify",
                [
                    RpcMethod(
                        "notify.status",
                        self.status,
                        NotifyStatusParams,
                        NotifyStatusResult,
                        "Each notification sink: what it delivered, dropped and failed",
                    )
                ],
            )
        )

    @hookimpl
    def paseo_register_status_sections(self, register: StatusSectionRegistrar) -> None:
        register(StatusSection(PLUGIN_ID, self.report))

    @hookimpl
    def paseo_register_doctor_checks(self, register: DoctorCheckRegistrar) -> None:
        register(DoctorCheck("notifications", doctor_findings))

    @hookimpl
    def paseo_startup(self, context: DaemonContext) -> None:
        self.settings = settings_of(context.config_section(PLUGIN_ID))
        declared = (
            list(context.notification_sinks) if isinstance(context, NotificationSinkSource) else []
        )
        if self.settings.sinks:
            log.warning(
                "plugins.notify.settings.sinks is deprecated: move the sinks to "
                "daemon.notifications (docs/notifications.md)"
            )
        sinks = [*declared, *self.settings.sinks]
        if not self.settings.enabled or not sinks:
            return
        self.workers = [_worker(i, sink, context.home) for i, sink in enumerate(sinks)]
        for worker in self.workers:
            if worker.disabled:
                log.error("notify sink %s is disabled: %s", worker.name, worker.disabled)
            worker.start()
        self._server_id = context.server_id
        self._subscription = context.agents.subscribe(
            _Attention(self, context.agents, context.server_id), name=PLUGIN_ID
        )

    @hookimpl
    def paseo_shutdown(self, context: DaemonContext) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        for worker in self.workers:
            worker.stop()

    @hookimpl
    def paseo_schedule_run_ended(self, run: ScheduleRunEnded) -> None:
        if run.status != "failed":
            return
        wanting = [w for w in self.workers if w.wants("schedule-failed")]
        if not wanting:
            return
        payload = payloads.schedule_failed(run, self._server_id)
        for worker in wanting:
            worker.offer(payload)

    async def attention(
        self, agents: Agents, server_id: str, agent_id: str, reason: str, timestamp: str
    ) -> None:
        wanting = [w for w in self.workers if w.wants(reason)]
        if not wanting:
            return
        built = await payloads.build(agents, agent_id, reason, timestamp, server_id)
        if built is None:
            return
        record, payload = built
        # As push: internal agents (titles, commit messages) are the daemon's own business.
        if record.internal and not self.settings.internalAgents:
            return
        for worker in wanting:
            worker.offer(payload)

    async def status(self, ctx: RpcContext, params: NotifyStatusParams) -> NotifyStatusResult:
        return self._status()

    def _status(self) -> NotifyStatusResult:
        return NotifyStatusResult(
            enabled=self.settings.enabled,
            sinks=[NotifySinkStatus.model_validate(w.status()) for w in self.workers],
        )

    async def report(self) -> StatusReport:
        """The ``notify`` line of ``paseo daemon status``."""
        status = self._status()
        return health.report(status.enabled, [sink.model_dump() for sink in status.sinks])


plugin = NotifyPlugin()
