"""The ``agent.*`` and ``provider.*`` RPC method groups: the agent service's RPC adapter.

Handlers reach the :class:`paseo.agents.manager.AgentService` through the
:class:`~paseo.services.ServiceRef` the composition root binds, so :func:`method_groups` needs
no instance (the protocol schema generator builds the groups with an unbound ref, and takes the
notification models from :func:`notifications`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel

from paseo.agents.listing import ListFilter
from paseo.agents.models import (
    NOTIFICATIONS,
    AgentCommandsResult,
    AgentCreateParams,
    AgentDetailResult,
    AgentFeatureParams,
    AgentImportParams,
    AgentListParams,
    AgentListResult,
    AgentModelParams,
    AgentModeParams,
    AgentModesResult,
    AgentRefParams,
    AgentResult,
    AgentSendParams,
    AgentSendResult,
    AgentThinkingParams,
    AgentTimelineParams,
    AgentTimelineResult,
    AgentUpdateParams,
    AgentWaitParams,
    AgentWaitResult,
    CommandView,
    ModeView,
    OkResult,
    PendingPermission,
    PermissionRespondParams,
    PermissionRespondResult,
    PermissionsListParams,
    PermissionsListResult,
    TimelineCursor,
)
from paseo.agents.provider_rpc import provider_group
from paseo.agents.registry import listing
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.agents.live import LiveAgent
    from paseo.agents.manager import AgentService

OWNER = frozenset({"local", "remote"})


async def _detail(agent: LiveAgent) -> AgentDetailResult:
    await agent.timeline.load()
    epoch, seq = agent.timeline.epoch, agent.timeline.seq
    return AgentDetailResult(
        agent=agent.record,
        pendingPermissions=list(agent.pending.values()),
        timeline=TimelineCursor(epoch=epoch, seq=seq) if epoch and seq else None,
        live=agent.session is not None,
    )


class _Handlers:
    """The handlers, reaching the service through ``ref`` at call time."""

    def __init__(self, ref: ServiceRef[AgentService]) -> None:
        self._ref = ref

    # --- agent.* -----------------------------------------------------------------------------

    async def create(self, ctx: RpcContext, params: AgentCreateParams) -> AgentResult:
        return AgentResult(agent=await self._ref.get().create(params))

    async def import_session(self, ctx: RpcContext, params: AgentImportParams) -> AgentResult:
        create = AgentCreateParams(
            provider=params.provider, cwd=params.cwd, title=params.title, labels=params.labels
        )
        return AgentResult(agent=await self._ref.get().import_session(create, params.sessionId))

    async def list_agents(self, ctx: RpcContext, params: AgentListParams) -> AgentListResult:
        admit = ListFilter(
            include_archived=params.includeArchived,
            labels=params.labels,
            provider=params.provider,
            workspace_id=params.workspaceId,
            statuses=set(params.statuses) if params.statuses is not None else None,
        )
        # A client's listing is answered at once: right after start, while the store still
        # checks its index, flagged partial rather than held back.
        page = await self._ref.get().list_agents(
            admit,
            cursor=params.cursor,
            limit=params.limit,
            newest_first=params.newestFirst,
            now=True,
        )
        return AgentListResult(
            agents=page.records,
            nextCursor=page.next_cursor,
            total=page.total,
            partial=True if page.partial else None,
        )

    async def get(self, ctx: RpcContext, params: AgentRefParams) -> AgentDetailResult:
        service = self._ref.get()
        return await _detail(await service.get(params.agentId))

    async def send(self, ctx: RpcContext, params: AgentSendParams) -> AgentSendResult:
        agent, message_id, accepted = await self._ref.get().send(
            params.agentId, params.text, params.messageId, params.images
        )
        return AgentSendResult(agentId=agent.id, messageId=message_id, accepted=accepted)

    async def interrupt(self, ctx: RpcContext, params: AgentRefParams) -> OkResult:
        agent = await self._ref.get().interrupt(params.agentId)
        return OkResult(agentId=agent.id)

    async def wait(self, ctx: RpcContext, params: AgentWaitParams) -> AgentWaitResult:
        service = self._ref.get()
        agent, outcome = await service.wait(params.agentId, params.timeout)
        return AgentWaitResult(
            agentId=agent.id,
            outcome=outcome,
            status=agent.record.lastStatus,
            lastMessage=await service.last_reply(agent),
            error=agent.record.lastError if outcome == "error" else None,
            pendingPermissions=list(agent.pending.values()),
        )

    async def stop(self, ctx: RpcContext, params: AgentRefParams) -> AgentResult:
        agent = await self._ref.get().close_agent(params.agentId)
        return AgentResult(agent=agent.record)

    async def archive(self, ctx: RpcContext, params: AgentRefParams) -> AgentResult:
        agent = await self._ref.get().archive(params.agentId)
        return AgentResult(agent=agent.record)

    async def restore(self, ctx: RpcContext, params: AgentRefParams) -> AgentResult:
        agent = await self._ref.get().restore(params.agentId)
        return AgentResult(agent=agent.record)

    async def delete(self, ctx: RpcContext, params: AgentRefParams) -> OkResult:
        return OkResult(agentId=await self._ref.get().delete(params.agentId))

    async def update(self, ctx: RpcContext, params: AgentUpdateParams) -> AgentResult:
        agent = await self._ref.get().update(
            params.agentId, title=params.title, labels=params.labels
        )
        return AgentResult(agent=agent.record)

    async def set_mode(self, ctx: RpcContext, params: AgentModeParams) -> AgentResult:
        agent = await self._ref.get().set_option(params.agentId, "modeId", params.modeId)
        return AgentResult(agent=agent.record)

    async def set_model(self, ctx: RpcContext, params: AgentModelParams) -> AgentResult:
        agent = await self._ref.get().set_option(params.agentId, "model", params.model)
        return AgentResult(agent=agent.record)

    async def set_thinking(self, ctx: RpcContext, params: AgentThinkingParams) -> AgentResult:
        agent = await self._ref.get().set_option(
            params.agentId, "thinkingOptionId", params.thinkingOptionId
        )
        return AgentResult(agent=agent.record)

    async def set_feature(self, ctx: RpcContext, params: AgentFeatureParams) -> AgentResult:
        agent = await self._ref.get().set_option(
            params.agentId, "feature", params.value, feature=params.featureId
        )
        return AgentResult(agent=agent.record)

    async def modes(self, ctx: RpcContext, params: AgentRefParams) -> AgentModesResult:
        service = self._ref.get()
        agent = await service.get(params.agentId)
        # A live session answers from what its program reported; only without one does the
        # provider list (which may have to start a probe of a slow program).
        live = agent.session.modes() if agent.session is not None else None
        if live is not None:
            listed = live
        else:
            provider = service.registry.usable(agent.record.provider)
            listed = await listing(agent.record.provider, provider.list_modes(service.launcher))
        current = agent.record.config.modeId if agent.record.config else None
        return AgentModesResult(
            agentId=agent.id,
            current=current or agent.record.lastModeId,
            modes=[ModeView(id=m.id, label=m.label, description=m.description) for m in listed],
        )

    async def commands(self, ctx: RpcContext, params: AgentRefParams) -> AgentCommandsResult:
        agent = await self._ref.get().get(params.agentId)
        session = agent.session
        listed = (session.commands() if session is not None else None) or []
        return AgentCommandsResult(
            agentId=agent.id,
            live=session is not None,
            commands=[
                CommandView(name=c.name, description=c.description, argumentHint=c.argumentHint)
                for c in listed
            ],
        )

    async def reload(self, ctx: RpcContext, params: AgentRefParams) -> AgentResult:
        agent = await self._ref.get().reload(params.agentId)
        return AgentResult(agent=agent.record)

    async def clear_attention(self, ctx: RpcContext, params: AgentRefParams) -> AgentResult:
        agent = await self._ref.get().clear_attention(params.agentId)
        return AgentResult(agent=agent.record)

    async def timeline(self, ctx: RpcContext, params: AgentTimelineParams) -> AgentTimelineResult:
        service = self._ref.get()
        agent = await service.get(params.agentId)
        epoch, entries, reset, has_more = await service.timeline_window(
            agent,
            after=(params.after.epoch, params.after.seq) if params.after else None,
            before=(params.before.epoch, params.before.seq) if params.before else None,
            limit=params.limit,
            tail=params.tail,
        )
        seq = agent.timeline.seq
        return AgentTimelineResult(
            agentId=agent.id,
            epoch=epoch,
            entries=entries,
            reset=reset,
            hasMore=has_more,
            last=TimelineCursor(epoch=epoch, seq=seq) if seq else None,
        )

    async def permissions(
        self, ctx: RpcContext, params: PermissionsListParams
    ) -> PermissionsListResult:
        pending = await self._ref.get().pending_permissions(params.agentId)
        return PermissionsListResult(
            requests=[PendingPermission(agentId=a, request=r) for a, r in pending]
        )

    async def respond(
        self, ctx: RpcContext, params: PermissionRespondParams
    ) -> PermissionRespondResult:
        agent = await self._ref.get().respond_permission(
            params.agentId,
            params.requestId,
            allow=params.behavior == "allow",
            updated_input=params.updatedInput,
            message=params.message,
            interrupt=params.interrupt,
        )
        return PermissionRespondResult(
            agentId=agent.id, requestId=params.requestId, behavior=params.behavior
        )


def _method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
    return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)


def method_groups(ref: ServiceRef[AgentService]) -> list[RpcMethodGroup]:
    """The ``agent`` and ``provider`` (:mod:`paseo.agents.provider_rpc`) method groups, serving
    the service ``ref`` is bound to."""
    h = _Handlers(ref)
    return [
        RpcMethodGroup(
            "agent",
            [
                _method(
                    "agent.create",
                    h.create,
                    AgentCreateParams,
                    AgentResult,
                    "Create an agent (and send its first prompt)",
                ),
                _method(
                    "agent.import",
                    h.import_session,
                    AgentImportParams,
                    AgentResult,
                    "Adopt an existing provider conversation, with its history, as an agent",
                ),
                _method(
                    "agent.list",
                    h.list_agents,
                    AgentListParams,
                    AgentListResult,
                    "Agents matching a filter, oldest first (or newest), paged by a keyset cursor",
                ),
                _method(
                    "agent.get",
                    h.get,
                    AgentRefParams,
                    AgentDetailResult,
                    "One agent with its pending permissions and timeline position",
                ),
                _method(
                    "agent.send",
                    h.send,
                    AgentSendParams,
                    AgentSendResult,
                    "Send a prompt; a running turn is interrupted and replaced",
                ),
                _method(
                    "agent.interrupt",
                    h.interrupt,
                    AgentRefParams,
                    OkResult,
                    "Cancel the running turn",
                ),
                _method(
                    "agent.wait",
                    h.wait,
                    AgentWaitParams,
                    AgentWaitResult,
                    "Wait until idle, a permission request, an error or the timeout",
                ),
                _method(
                    "agent.stop",
                    h.stop,
                    AgentRefParams,
                    AgentResult,
                    "Interrupt and stop the provider process (resumable)",
                ),
                _method(
                    "agent.archive",
                    h.archive,
                    AgentRefParams,
                    AgentResult,
                    "Stop the agent and hide it from default listings",
                ),
                _method(
                    "agent.restore", h.restore, AgentRefParams, AgentResult, "Un-archive an agent"
                ),
                _method(
                    "agent.delete",
                    h.delete,
                    AgentRefParams,
                    OkResult,
                    "Stop the agent and move it to the trash (trash.restore brings it back)",
                ),
                _method(
                    "agent.update",
                    h.update,
                    AgentUpdateParams,
                    AgentResult,
                    "Change the title or labels",
                ),
                _method(
                    "agent.mode.set", h.set_mode, AgentModeParams, AgentResult, "Switch the mode"
                ),
                _method(
                    "agent.modes",
                    h.modes,
                    AgentRefParams,
                    AgentModesResult,
                    "The modes the agent's provider offers",
                ),
                _method(
                    "agent.model.set",
                    h.set_model,
                    AgentModelParams,
                    AgentResult,
                    "Switch the model",
                ),
                _method(
                    "agent.thinking.set",
                    h.set_thinking,
                    AgentThinkingParams,
                    AgentResult,
                    "Switch the thinking level",
                ),
                _method(
                    "agent.feature.set",
                    h.set_feature,
                    AgentFeatureParams,
                    AgentResult,
                    "Set a provider feature",
                ),
                _method(
                    "agent.commands",
                    h.commands,
                    AgentRefParams,
                    AgentCommandsResult,
                    "The slash commands the agent's running program reported",
                ),
                _method(
                    "agent.reload",
                    h.reload,
                    AgentRefParams,
                    AgentResult,
                    "Restart the provider process and resume the conversation",
                ),
                _method(
                    "agent.attention.clear",
                    h.clear_attention,
                    AgentRefParams,
                    AgentResult,
                    "Clear the agent's attention flag",
                ),
                _method(
                    "agent.timeline",
                    h.timeline,
                    AgentTimelineParams,
                    AgentTimelineResult,
                    "A window of the durable timeline (re-fetch after a gap)",
                ),
                _method(
                    "agent.permissions.list",
                    h.permissions,
                    PermissionsListParams,
                    PermissionsListResult,
                    "Pending permission requests",
                ),
                _method(
                    "agent.permissions.respond",
                    h.respond,
                    PermissionRespondParams,
                    PermissionRespondResult,
                    "Allow or deny a pending request",
                ),
            ],
        ),
        provider_group(ref),
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The agent notifications (method → params model), for the protocol schema."""
    return dict(NOTIFICATIONS)
