"""A new agent's record: its provider (and model), where it runs and its starting config.

Every agent is stamped with a workspace: a ``workspaceId`` names one, a ``cwd`` is placed in
the workspace the workspaces service provisions for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.records import AgentRecord, SerializableConfig, new_agent_id
from paseo_hookspecs.store import (
    MAX_PAGE_SIZE,
    AgentFilter,
    AgentRepository,
    WorkspaceRepository,
)

from paseo.agents.ports import WorkspacePlacement
from paseo.agents.registry import ProviderRegistry
from paseo.agents.tracker import iso_now

if TYPE_CHECKING:
    from paseo.agents.models import AgentCreateParams


async def new_record(
    params: AgentCreateParams,
    registry: ProviderRegistry,
    workspaces: WorkspaceRepository,
    placement: WorkspacePlacement,
    extra_fields: Mapping[str, Any] | None = None,
) -> AgentRecord:
    """The record of the agent ``params`` asks for (not stored yet). ``provider`` may be
    ``<provider>/<model>``; without one the first ready provider is taken. ``extra_fields``
    are further top-level record fields a kernel caller sets (the Hub host's ``owner``)."""
    provider_id, model = params.provider, params.model
    if provider_id and "/" in provider_id:
        provider_id, _, slash_model = provider_id.partition("/")
        model = model or slash_model or None
    if not provider_id:
        provider_id = registry.default_provider()
        if provider_id is None:
            raise Unavailable(
                "no agent provider is ready; see `paseo provider ls` for why, or name one "
                "with --provider"
            )
    registry.usable(provider_id)
    cwd, workspace_id = await _place(params.cwd, params.workspaceId, workspaces, placement)
    now = iso_now()
    config = SerializableConfig(
        title=params.title,
        modeId=params.modeId,
        model=model,
        thinkingOptionId=params.thinkingOptionId,
        featureValues=dict(params.featureValues),
        providerOptions=dict(params.providerOptions) or None,
        systemPrompt=params.systemPrompt,
        mcpServers=dict(params.mcpServers) or None,
    )
    fields: dict[str, Any] = {
        "id": new_agent_id(),
        "provider": provider_id,
        "cwd": cwd,
        "workspaceId": workspace_id,
        "createdAt": now,
        "updatedAt": now,
        "lastActivityAt": now,
        "title": params.title,
        "labels": dict(params.labels),
        "lastStatus": "initializing",
        "lastModeId": params.modeId,
        "config": config,
        "requiresAttention": False,
    }
    if params.internal:
        fields["internal"] = True
    if params.budget is not None and (params.budget.tokens, params.budget.usd) != (None, None):
        fields["budget"] = params.budget.model_dump(exclude_none=True)
    fields.update(extra_fields or {})
    return AgentRecord.model_validate(fields)


async def _place(
    cwd: str | None,
    workspace_id: str | None,
    workspaces: WorkspaceRepository,
    placement: WorkspacePlacement,
) -> tuple[str, str]:
    """Where the agent runs and the workspace it belongs to."""
    if workspace_id is not None:
        workspace = await workspaces.get(workspace_id)
        if workspace is None:
            raise NotFound(f"no workspace {workspace_id!r}", data={"workspaceId": workspace_id})
        if cwd is not None and os.path.normpath(cwd) != workspace.cwd:  # noqa: ASYNC240
            raise InvalidParams("give cwd or workspaceId, not two different places")
        return workspace.cwd, workspace.workspaceId
    if not cwd:
        raise InvalidParams("an agent needs a cwd (absolute directory) or a workspaceId")
    if not os.path.isabs(cwd):
        raise InvalidParams(f"cwd must be an absolute path, got {cwd!r}")
    workspace = await placement.ensure_workspace_for_cwd(cwd)
    return workspace.cwd, workspace.workspaceId


async def holder_of(
    agents: AgentRepository, loaded: Iterable[AgentRecord], provider: str, session_id: str
) -> str | None:
    """The agent holding ``provider``'s conversation ``session_id`` (an import must not adopt
    it twice): the ``loaded`` agents' in-memory records first, then every stored agent of that
    provider, page by page."""
    for existing in loaded:
        held = existing.persistence
        if held is not None and (held.provider, held.sessionId) == (provider, session_id):
            return existing.id
    wanted = AgentFilter(provider=provider, include_archived=True)
    cursor: str | None = None
    while True:
        page = await agents.list(wanted, cursor=cursor, limit=MAX_PAGE_SIZE)
        for stored in page.items:
            held = stored.persistence
            if held is not None and (held.provider, held.sessionId) == (provider, session_id):
                return stored.id
        cursor = page.next_cursor
        if cursor is None:
            return None
