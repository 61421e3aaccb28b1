"""The push plugin's hooks: token RPCs, client heartbeats, and attention heard through the
agent port (``DaemonContext.agents``, subscribed at startup).

Each attention's work (reading the agent record, deciding, notifying or pushing) runs in a task
of its own, so a slow push service delays neither the next attention nor the port's queue.
Tasks still running at shutdown are cancelled: a notification about a daemon that is going away
has nothing left to offer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from paseo_hookspecs import hookimpl
from paseo_hookspecs.agents import AgentObserver, Subscription
from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.registration import (
    ConfigSection,
    ConfigSectionRegistrar,
    RpcMethod,
    RpcMethodGroup,
    RpcRegistrar,
)

from paseo_push.clients import ClientRegistry
from paseo_push.expo import is_expo_token, send
from paseo_push.policy import ClientState, decide
from paseo_push.rpc import (
    IN_APP_NOTICE,
    AttentionNotice,
    HeartbeatParams,
    HeartbeatResult,
    PushRegisterParams,
    PushRegisterResult,
    PushUnregisterParams,
    PushUnregisterResult,
)
from paseo_push.settings import PushSettings, settings_of

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext, RpcContext
    from paseo_hookspecs.records import AttentionReason

PLUGIN_ID = "push"
REASON_TEXT = {
    "finished": "Finished",
    "permission": "Needs your permission",
    "error": "Failed",
    "budget": "Spent its budget",
}

log = logging.getLogger("paseo.plugins.push")


def _epoch(iso: str | None, now: float) -> float:
    """``iso`` as epoch seconds; absent or unreadable means now, the future is clamped."""
    if not iso:
        return now
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return now
    if moment.tzinfo is None:
        return now
    return min(moment.timestamp(), now)


class _Attention(AgentObserver):
    """The plugin's subscriber on the agent port: only attention matters to it."""

    def __init__(self, plugin: PushPlugin) -> None:
        self._plugin = plugin

    async def on_attention(self, agent_id: str, reason: AttentionReason, timestamp: str) -> None:
        self._plugin.attention(agent_id, reason, timestamp)


class PushPlugin:
    """The plugin object (the entry point names :data:`plugin`)."""

    def __init__(self) -> None:
        self.clients = ClientRegistry()
        self._daemon: DaemonContext | None = None
        self._subscription: Subscription | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------- registration

    @hookimpl
    def paseo_register_config_sections(self, register: ConfigSectionRegistrar) -> None:
        register(ConfigSection(PushSettings, "Expo push notifications"))

    @hookimpl
    def paseo_register_rpc_methods(self, register: RpcRegistrar) -> None:
        register(
            RpcMethodGroup(
                "push",
                [
                    RpcMethod(
                        "push.register",
                        self.register_token,
                        PushRegisterParams,
                        PushRegisterResult,
                        "Register an Expo push token for attention notifications",
                    ),
                    RpcMethod(
                        "push.unregister",
                        self.unregister_token,
                        PushUnregisterParams,
                        PushUnregisterResult,
                        "Forget an Expo push token",
                    ),
                ],
            )
        )
        register(
            RpcMethodGroup(
                "client",
                [
                    RpcMethod(
                        "client.heartbeat",
                        self.heartbeat,
                        HeartbeatParams,
                        HeartbeatResult,
                        "Report this client's device, focused agent, visibility and activity",
                    )
                ],
            )
        )

    # ---------------------------------------------------------------- lifecycle

    @hookimpl
    def paseo_startup(self, context: DaemonContext) -> None:
        self._daemon = context
        self._subscription = context.agents.subscribe(_Attention(self), name=PLUGIN_ID)

    @hookimpl
    def paseo_shutdown(self, context: DaemonContext) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            subscription.close()
        for task in list(self._tasks):
            task.cancel()
        self.clients.clear()
        self._daemon = None

    # --------------------------------------------------------------------- RPC

    async def register_token(
        self, ctx: RpcContext, params: PushRegisterParams
    ) -> PushRegisterResult:
        if not params.valid_token():
            raise InvalidParams("token must be an Expo push token (ExponentPushToken[…])")
        added = await ctx.daemon.store.push_tokens.add(params.token)
        return PushRegisterResult(registered=added)

    async def unregister_token(
        self, ctx: RpcContext, params: PushUnregisterParams
    ) -> PushUnregisterResult:
        removed = await ctx.daemon.store.push_tokens.remove(params.token)
        return PushUnregisterResult(removed=removed)

    async def heartbeat(self, ctx: RpcContext, params: HeartbeatParams) -> HeartbeatResult:
        if not ctx.client_id:
            raise InvalidParams("send server.hello with a clientId before client.heartbeat")
        now = time.time()
        state = ClientState(
            client_id=ctx.client_id,
            device_type=params.deviceType,
            focused_agent_id=params.focusedAgentId,
            visible=params.visible,
            last_activity=_epoch(params.lastActivityAt, now),
        )
        self.clients.heartbeat(state, ctx, now)
        return HeartbeatResult(clientId=ctx.client_id)

    # --------------------------------------------------------------- attention

    def attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        """``agent_id`` asks for a person: decide and notify, in a task of its own."""
        if self._daemon is None:
            return
        task = asyncio.get_running_loop().create_task(
            self._attend(self._daemon, agent_id, reason, timestamp)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _attend(
        self, daemon: DaemonContext, agent_id: str, reason: str, timestamp: str
    ) -> None:
        try:
            await self._notify(daemon, agent_id, reason, timestamp)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("attention notification for agent %s failed", agent_id)

    async def _notify(
        self, daemon: DaemonContext, agent_id: str, reason: str, timestamp: str
    ) -> None:
        try:
            record = await daemon.agents.get(agent_id)
        except NotFound:
            return
        now = time.time()
        decision = decide(
            agent_id=agent_id,
            reason=reason,
            internal=bool(record.internal),
            clients=self.clients.states(now),
            now=now,
        )
        log.debug("attention %s for %s: %s (%s)", reason, agent_id, decision.action, decision.why)
        title = record.title or f"Agent {agent_id[:8]}"
        if decision.action == "in_app" and decision.client_id is not None:
            await self._in_app(decision.client_id, agent_id, reason, timestamp, title)
        elif decision.action == "push":
            await self._push(daemon, agent_id, reason, title)

    async def _in_app(
        self, client_id: str, agent_id: str, reason: str, timestamp: str, title: str
    ) -> None:
        notifier = self.clients.notifier(client_id)
        if notifier is None:
            return
        notice = AttentionNotice(agentId=agent_id, reason=reason, timestamp=timestamp, title=title)
        await notifier.notify(IN_APP_NOTICE, notice.model_dump())

    async def _push(self, daemon: DaemonContext, agent_id: str, reason: str, title: str) -> None:
        settings = settings_of(daemon.config_section(PLUGIN_ID))
        if not settings.enabled:
            return
        # The store parses permissively; the SDK would refuse a whole batch for one odd token.
        tokens = [t for t in await daemon.store.push_tokens.list() if is_expo_token(t)]
        if not tokens:
            return
        data: dict[str, Any] = {"agentId": agent_id, "reason": reason, "serverId": daemon.server_id}
        outcome = await asyncio.to_thread(
            send,
            tokens,
            title=title,
            body=REASON_TEXT.get(reason, reason),
            data=data,
            endpoint=settings.endpoint,
            timeout=settings.timeout,
        )
        for token in outcome.unregistered:
            await daemon.store.push_tokens.remove(token)
        if outcome.unregistered:
            log.info("forgot %d push token(s) Expo no longer knows", len(outcome.unregistered))


plugin = PushPlugin()
