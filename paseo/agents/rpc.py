"""The ``agent.*`` and ``provider.*`` RPC method groups.

Handlers find the running :class:`paseo.agents.manager.AgentService` through the call's daemon,
so :func:`method_groups` needs no instance (the protocol schema generator calls it too).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.agents.models import (
    AgentCreateParams,
    AgentDetailResult,
    AgentFeatureParams,
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
    AvailabilityView,
    ModelView,
    ModeView,
    OkResult,
    PendingPermission,
    PermissionRespondParams,
    PermissionRespondResult,
    PermissionsListParams,
    PermissionsListResult,
    ProviderListParams,
    ProviderListResult,
    ProviderModelsParams,
    ProviderModelsResult,
    ProviderView,
    ThinkingView,
    TimelineCursor,
)
from paseo.agents.registry import PROBE_TIMEOUT

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.agents.manager import AgentService, LiveAgent

OWNER = frozenset({"local", "remote"})


def _service(ctx: RpcContext) -> AgentService:
    from paseo.agents.manager import AgentService

    for service in getattr(ctx.daemon, "services", ()):
        if isinstance(service, AgentService):
            return service
    raise Unavailable("the agent service is not running")


async def _detail(service: AgentService, agent: LiveAgent) -> AgentDetailResult:
    await agent.timeline.load()
    epoch, seq = agent.timeline.epoch, agent.timeline.seq
    return AgentDetailResult(
        agent=agent.record,
        pendingPermissions=list(agent.pending.values()),
        timeline=TimelineCursor(epoch=epoch, seq=seq) if epoch and seq else None,
        live=agent.session is not None,
    )


# --- agent.* ---------------------------------------------------------------------------------


async def create(ctx: RpcContext, params: AgentCreateParams) -> AgentResult:
    return AgentResult(agent=await _service(ctx).create(params))


async def list_agents(ctx: RpcContext, params: AgentListParams) -> AgentListResult:
    records = _service(ctx).list_agents(
        include_archived=params.includeArchived,
        labels=params.labels,
        provider=params.provider,
        workspace_id=params.workspaceId,
        statuses=set(params.statuses) if params.statuses is not None else None,
    )
    return AgentListResult(agents=records)


async def get(ctx: RpcContext, params: AgentRefParams) -> AgentDetailResult:
    service = _service(ctx)
    return await _detail(service, service.get(params.agentId))


async def send(ctx: RpcContext, params: AgentSendParams) -> AgentSendResult:
    agent, message_id, accepted = await _service(ctx).send(
        params.agentId, params.text, params.messageId
    )
    return AgentSendResult(agentId=agent.id, messageId=message_id, accepted=accepted)


async def interrupt(ctx: RpcContext, params: AgentRefParams) -> OkResult:
    agent = await _service(ctx).interrupt(params.agentId)
    return OkResult(agentId=agent.id)


async def wait(ctx: RpcContext, params: AgentWaitParams) -> AgentWaitResult:
    service = _service(ctx)
    agent, outcome = await service.wait(params.agentId, params.timeout)
    return AgentWaitResult(
        agentId=agent.id,
        outcome=outcome,
        status=agent.record.lastStatus,
        lastMessage=await service.last_reply(agent),
        error=agent.record.lastError if outcome == "error" else None,
        pendingPermissions=list(agent.pending.values()),
    )


async def stop(ctx: RpcContext, params: AgentRefParams) -> AgentResult:
    agent = await _service(ctx).close_agent(params.agentId)
    return AgentResult(agent=agent.record)


async def archive(ctx: RpcContext, params: AgentRefParams) -> AgentResult:
    agent = await _service(ctx).archive(params.agentId)
    return AgentResult(agent=agent.record)


async def restore(ctx: RpcContext, params: AgentRefParams) -> AgentResult:
    agent = await _service(ctx).restore(params.agentId)
    return AgentResult(agent=agent.record)


async def delete(ctx: RpcContext, params: AgentRefParams) -> OkResult:
    return OkResult(agentId=await _service(ctx).delete(params.agentId))


async def update(ctx: RpcContext, params: AgentUpdateParams) -> AgentResult:
    agent = await _service(ctx).update(params.agentId, title=params.title, labels=params.labels)
    return AgentResult(agent=agent.record)


async def set_mode(ctx: RpcContext, params: AgentModeParams) -> AgentResult:
    agent = await _service(ctx).set_option(params.agentId, "modeId", params.modeId)
    return AgentResult(agent=agent.record)


async def set_model(ctx: RpcContext, params: AgentModelParams) -> AgentResult:
    agent = await _service(ctx).set_option(params.agentId, "model", params.model)
    return AgentResult(agent=agent.record)


async def set_thinking(ctx: RpcContext, params: AgentThinkingParams) -> AgentResult:
    agent = await _service(ctx).set_option(
        params.agentId, "thinkingOptionId", params.thinkingOptionId
    )
    return AgentResult(agent=agent.record)


async def set_feature(ctx: RpcContext, params: AgentFeatureParams) -> AgentResult:
    agent = await _service(ctx).set_option(
        params.agentId, "feature", params.value, feature=params.featureId
    )
    return AgentResult(agent=agent.record)


async def modes(ctx: RpcContext, params: AgentRefParams) -> AgentModesResult:
    service = _service(ctx)
    agent = service.get(params.agentId)
    provider = service.registry.usable(agent.record.provider)
    listed = await asyncio.wait_for(provider.list_modes(), PROBE_TIMEOUT)
    current = agent.record.config.modeId if agent.record.config else None
    return AgentModesResult(
        agentId=agent.id,
        current=current or agent.record.lastModeId,
        modes=[ModeView(id=m.id, label=m.label, description=m.description) for m in listed],
    )


async def reload(ctx: RpcContext, params: AgentRefParams) -> AgentResult:
    agent = await _service(ctx).reload(params.agentId)
    return AgentResult(agent=agent.record)


async def clear_attention(ctx: RpcContext, params: AgentRefParams) -> AgentResult:
    agent = await _service(ctx).clear_attention(params.agentId)
    return AgentResult(agent=agent.record)


async def timeline(ctx: RpcContext, params: AgentTimelineParams) -> AgentTimelineResult:
    service = _service(ctx)
    agent = service.get(params.agentId)
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


async def permissions(ctx: RpcContext, params: PermissionsListParams) -> PermissionsListResult:
    pending = _service(ctx).pending_permissions(params.agentId)
    return PermissionsListResult(
        requests=[PendingPermission(agentId=a, request=r) for a, r in pending]
    )


async def respond(ctx: RpcContext, params: PermissionRespondParams) -> PermissionRespondResult:
    agent = await _service(ctx).respond_permission(
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


# --- provider.* ------------------------------------------------------------------------------


async def provider_list(ctx: RpcContext, params: ProviderListParams) -> ProviderListResult:
    registry = _service(ctx).registry
    entries = registry.entries()
    if params.refresh:
        await asyncio.gather(*(registry.probe(entry) for entry in entries))
    views = []
    for entry in entries:
        snapshot = registry.availability(entry.id)
        views.append(
            ProviderView(
                id=entry.id,
                label=entry.label,
                extends=entry.extends,
                enabled=entry.enabled,
                order=entry.order,
                availability=AvailabilityView(
                    status=snapshot.availability.status,
                    reason=snapshot.availability.reason,
                    checkedAt=snapshot.checked_at,
                ),
            )
        )
    return ProviderListResult(providers=views)


async def provider_models(ctx: RpcContext, params: ProviderModelsParams) -> ProviderModelsResult:
    provider = _service(ctx).registry.usable(params.providerId)
    try:
        models, listed_modes = await asyncio.wait_for(
            asyncio.gather(provider.list_models(), provider.list_modes()), PROBE_TIMEOUT
        )
    except TimeoutError:
        raise Unavailable(
            f"provider {params.providerId!r} did not list its models within "
            f"{PROBE_TIMEOUT:.0f}s; see `paseo provider ls`"
        ) from None
    return ProviderModelsResult(
        providerId=params.providerId,
        models=[
            ModelView(
                id=m.id,
                label=m.label,
                default=m.default,
                thinkingOptions=[ThinkingView(id=t.id, label=t.label) for t in m.thinkingOptions],
            )
            for m in models
        ],
        modes=[ModeView(id=m.id, label=m.label, description=m.description) for m in listed_modes],
    )


def _method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
    return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)


def method_groups() -> list[RpcMethodGroup]:
    """The ``agent`` and ``provider`` method groups."""
    return [
        RpcMethodGroup(
            "agent",
            [
                _method(
                    "agent.create",
                    create,
                    AgentCreateParams,
                    AgentResult,
                    "Create an agent (and send its first prompt)",
                ),
                _method(
                    "agent.list",
                    list_agents,
                    AgentListParams,
                    AgentListResult,
                    "Agents matching a filter, oldest first",
                ),
                _method(
                    "agent.get",
                    get,
                    AgentRefParams,
                    AgentDetailResult,
                    "One agent with its pending permissions and timeline position",
                ),
                _method(
                    "agent.send",
                    send,
                    AgentSendParams,
                    AgentSendResult,
                    "Send a prompt; a running turn is interrupted and replaced",
                ),
                _method(
                    "agent.interrupt",
                    interrupt,
                    AgentRefParams,
                    OkResult,
                    "Cancel the running turn",
                ),
                _method(
                    "agent.wait",
                    wait,
                    AgentWaitParams,
                    AgentWaitResult,
                    "Wait until idle, a permission request, an error or the timeout",
                ),
                _method(
                    "agent.stop",
                    stop,
                    AgentRefParams,
                    AgentResult,
                    "Interrupt and stop the provider process (resumable)",
                ),
                _method(
                    "agent.archive",
                    archive,
                    AgentRefParams,
                    AgentResult,
                    "Stop the agent and hide it from default listings",
                ),
                _method(
                    "agent.restore", restore, AgentRefParams, AgentResult, "Un-archive an agent"
                ),
                _method(
                    "agent.delete",
                    delete,
                    AgentRefParams,
                    OkResult,
                    "Stop the agent and delete it with its timeline",
                ),
                _method(
                    "agent.update",
                    update,
                    AgentUpdateParams,
                    AgentResult,
                    "Change the title or labels",
                ),
                _method(
                    "agent.mode.set", set_mode, AgentModeParams, AgentResult, "Switch the mode"
                ),
                _method(
                    "agent.modes",
                    modes,
                    AgentRefParams,
                    AgentModesResult,
                    "The modes the agent's provider offers",
                ),
                _method(
                    "agent.model.set", set_model, AgentModelParams, AgentResult, "Switch the model"
                ),
                _method(
                    "agent.thinking.set",
                    set_thinking,
                    AgentThinkingParams,
                    AgentResult,
                    "Switch the thinking level",
                ),
                _method(
                    "agent.feature.set",
                    set_feature,
                    AgentFeatureParams,
                    AgentResult,
                    "Set a provider feature",
                ),
                _method(
                    "agent.reload",
                    reload,
                    AgentRefParams,
                    AgentResult,
                    "Restart the provider process and resume the conversation",
                ),
                _method(
                    "agent.attention.clear",
                    clear_attention,
                    AgentRefParams,
                    AgentResult,
                    "Clear the agent's attention flag",
                ),
                _method(
                    "agent.timeline",
                    timeline,
                    AgentTimelineParams,
                    AgentTimelineResult,
                    "A window of the durable timeline (re-fetch after a gap)",
                ),
                _method(
                    "agent.permissions.list",
                    permissions,
                    PermissionsListParams,
                    PermissionsListResult,
                    "Pending permission requests",
                ),
                _method(
                    "agent.permissions.respond",
                    respond,
                    PermissionRespondParams,
                    PermissionRespondResult,
                    "Allow or deny a pending request",
                ),
            ],
        ),
        RpcMethodGroup(
            "provider",
            [
                _method(
                    "provider.list",
                    provider_list,
                    ProviderListParams,
                    ProviderListResult,
                    "Agent providers with their availability",
                ),
                _method(
                    "provider.models",
                    provider_models,
                    ProviderModelsParams,
                    ProviderModelsResult,
                    "A provider's models and modes",
                ),
            ],
        ),
    ]
