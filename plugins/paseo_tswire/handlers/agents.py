"""Agent directory and lifecycle: list, fetch, create, send, wait, cancel, delete, archive,
update, import, refresh, the setters, permissions and attention.

Each is a typed call of the session's agent port (``SessionHandle.agents``, with the
session's access: what ``/ws`` allows). Four have no port method and stay one JSON-RPC call of
the session: ``agent.import`` (import and resume by handle), ``agent.reload`` (refresh),
``agent.commands``, ``agent.thinking.set`` / ``agent.feature.set`` and
``agent.attention.clear`` (``docs/ts-clients.md``, "Trust").
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.agents import AgentCreate, AgentQuery, PermissionAnswer, WaitResult
from paseo_hookspecs.errors import InvalidParams, PaseoError
from pydantic import ValidationError

from paseo_tswire import projection
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers import agent_directory, workspace_extra
from paseo_tswire.models import inbound as req
from paseo_tswire.models import messages as out
from paseo_tswire.models.agent import AgentMode, AgentSnapshot
from paseo_tswire.port import Failure, as_json

WAIT_CHUNK = 600.0
"""Seconds per ``AgentControl.wait`` call (``agent.wait``'s maximum); longer waits repeat it,
so one call never holds the session's in-flight slot unboundedly."""


async def _snapshots(
    session: ClientSession, records: list[dict[str, Any]]
) -> list[out.DirectoryEntry]:
    pending: dict[str, list[dict[str, Any]]] = {}
    if records:
        for agent_id, requests in (await session.agents.all_pending_permissions()).items():
            pending[agent_id] = [as_json(r) for r in requests]
    modes: dict[str, list[AgentMode]] = {}
    places = await session.placements(records)
    entries = []
    for record in records:
        available = await session.modes_of(str(record.get("provider") or ""), modes)
        agent = projection.snapshot(
            record, pending=pending.get(record["id"], []), available_modes=available
        )
        entries.append(out.DirectoryEntry(agent=agent, project=places[record["id"]]))
    return entries


async def _directory(
    session: ClientSession, msg: req.FetchAgents
) -> tuple[list[out.DirectoryEntry], out.PageInfo]:
    if agent_directory.needs_full_read(msg):
        return await agent_directory.full_directory(session, msg, _snapshots)
    flt = msg.filter
    query: dict[str, Any] = {"newest_first": True}
    if flt is not None:
        if flt.includeArchived and msg.scope != "active":
            query["include_archived"] = True
        if flt.labels:
            query["labels"] = flt.labels
        if flt.statuses:
            query["statuses"] = frozenset(s for s in flt.statuses if s in projection.STATUSES)
    page_in = msg.page
    found = await session.agents.list(
        AgentQuery(**query),
        cursor=(page_in.cursor or None) if page_in is not None else None,
        limit=page_in.limit if page_in is not None else None,
    )
    records = [as_json(r) for r in found.items]
    if flt is not None and flt.requiresAttention is not None:
        records = [r for r in records if bool(r.get("requiresAttention")) == flt.requiresAttention]
    next_cursor = found.next_cursor if page_in is not None else None
    page = out.PageInfo(
        nextCursor=next_cursor,
        prevCursor=page_in.cursor if page_in is not None else None,
        hasMore=next_cursor is not None,
    )
    return await _snapshots(session, records), page


async def fetch_agents(session: ClientSession, msg: req.FetchAgents) -> None:
    entries, page = await _directory(session, msg)
    subscription = None
    if msg.subscribe is not None:
        session.agents_subscribed = True
        subscription = msg.subscribe.subscriptionId or f"agents:{session.client_id}"
        session.subscription_id = subscription
    await session.push(
        "fetch_agents_response",
        out.FetchAgents(
            requestId=msg.requestId, subscriptionId=subscription, entries=entries, pageInfo=page
        ),
    )


async def fetch_history(session: ClientSession, msg: req.FetchAgents) -> None:
    """The same directory as ``fetch_agents_request`` (the TypeScript daemon's rule), never
    subscribed."""
    entries, page = await _directory(session, msg)
    await session.push(
        "fetch_agent_history_response",
        out.AgentHistory(requestId=msg.requestId, entries=entries, pageInfo=page),
    )


async def close_items(session: ClientSession, msg: req.CloseItems) -> None:
    """Archive the agents and kill the terminals; each result says what happened."""
    agents: list[out.ClosedAgent] = []
    for agent_id in msg.agentIds:
        try:
            record = await session.agents.archive(agent_id, force=True)
        except Failure:
            continue
        agents.append(out.ClosedAgent(agentId=record.id, archivedAt=record.archivedAt or ""))
    terminals: list[out.ClosedTerminal] = []
    for terminal_id in msg.terminalIds:
        try:
            await session.call("terminal.kill", {"terminalId": terminal_id})
        except RpcFailure:
            terminals.append(out.ClosedTerminal(terminalId=terminal_id, success=False))
        else:
            terminals.append(out.ClosedTerminal(terminalId=terminal_id, success=True))
    await session.push(
        "close_items_response",
        out.CloseItems(agents=agents, terminals=terminals, requestId=msg.requestId),
    )


async def fetch_agent(session: ClientSession, msg: req.AgentRef) -> None:
    try:
        agent, place = await session.snapshot(msg.agentId)
    except Failure as exc:
        if exc.code not in ("not_found", "conflict", "invalid_params"):
            raise
        await session.push(
            "fetch_agent_response",
            out.FetchAgent(requestId=msg.requestId, agent=None, error=exc.message),
        )
        return
    await session.push(
        "fetch_agent_response",
        out.FetchAgent(requestId=msg.requestId, agent=agent, project=place, error=None),
    )


async def create_agent(session: ClientSession, msg: req.CreateAgent) -> None:
    config = msg.config
    fields: dict[str, Any] = {"provider": config.provider, "cwd": config.cwd}
    for key in (
        "modeId",
        "model",
        "thinkingOptionId",
        "featureValues",
        "systemPrompt",
        "mcpServers",
    ):
        value = getattr(config, key)
        if value is not None:
            fields[key] = value
    if config.title:
        fields["title"] = config.title
    if msg.initialPrompt:
        fields["initialPrompt"] = msg.initialPrompt
    if msg.clientMessageId:
        fields["messageId"] = msg.clientMessageId
    if msg.labels:
        fields["labels"] = msg.labels
    if msg.workspaceId:
        fields["workspaceId"] = msg.workspaceId
    try:
        if msg.git is not None and msg.git.createWorktree:
            # The agent starts in a new worktree of its directory's project (setup run first).
            made = await workspace_extra.worktree_for_agent(
                session, config.cwd, msg.git, msg.initialPrompt
            )
            fields.update(cwd=made["cwd"], workspaceId=made["workspaceId"])
        try:
            spec = AgentCreate(**fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidParams(f"{where}: {first['msg']}") from None
        record = await session.agents.create(spec)
        agent, _ = await session.snapshot(record.id)
    except Failure as exc:
        await _create_failed(session, msg.requestId, exc)
        return
    await session.push(
        "status", out.AgentCreated(agentId=agent.id, requestId=msg.requestId, agent=agent)
    )


async def _create_failed(
    session: ClientSession, request_id: str, exc: RpcFailure | PaseoError
) -> None:
    await session.push(
        "status",
        out.AgentCreateFailed(requestId=request_id, error=exc.message, errorCode=exc.code),
    )


async def _adopt(
    session: ClientSession,
    request_id: str,
    method: str,
    params: dict[str, Any],
    answer: type[out.AgentResumed],
) -> None:
    """Call ``method`` (``agent.import``, which the port has no method for) and answer with
    the new agent's snapshot, or with ``agent_create_failed`` naming the daemon's error."""
    try:
        result = await session.call(method, params)
        agent, _ = await session.snapshot(result["agent"]["id"])
    except Failure as exc:
        await _create_failed(session, request_id, exc)
        return
    await session.push("status", answer(agentId=agent.id, requestId=request_id, agent=agent))


async def import_agent(session: ClientSession, msg: req.ImportAgent) -> None:
    """``agent.import``: the program's conversation adopted with its history, resumed."""
    if not msg.cwd:
        # The daemon's own directory would be a guess: the conversation ran somewhere.
        await session.push(
            "status",
            out.AgentCreateFailed(
                requestId=msg.requestId,
                error="importing needs the directory the conversation ran in (cwd)",
                errorCode="invalid_params",
            ),
        )
        return
    params: dict[str, Any] = {"provider": msg.provider, "sessionId": msg.sessionId}
    params["cwd"] = msg.cwd
    if msg.labels:
        params["labels"] = msg.labels
    await _adopt(session, msg.requestId, "agent.import", params, out.AgentResumed)


async def resume_agent(session: ClientSession, msg: req.ResumeAgent) -> None:
    """Resume the conversation a persistence handle names: ``agent.import`` adopts it as a new
    agent; when an agent holds it already, that agent is restored from the archive and its
    session started. Failures answer ``rpc_error`` (the TypeScript client waits only for
    ``status:agent_resumed`` or that)."""
    handle = msg.handle
    if handle is None:
        raise RpcFailure("invalid_params", "resuming needs the conversation's persistence handle")
    metadata = handle.metadata or {}
    cwd = (msg.overrides.cwd if msg.overrides else None) or metadata.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        raise RpcFailure(
            "invalid_params",
            "resuming needs the directory the conversation ran in "
            "(overrides.cwd, or the handle's metadata.cwd)",
        )
    params: dict[str, Any] = {"provider": handle.provider, "sessionId": handle.sessionId}
    params["cwd"] = cwd
    if msg.overrides is not None and msg.overrides.title:
        params["title"] = msg.overrides.title
    try:
        result = await session.call("agent.import", params)
        agent_id = str(result["agent"]["id"])
    except RpcFailure as exc:
        holder = exc.data.get("agentId") if exc.code == "conflict" else None
        if not isinstance(holder, str):
            raise
        agent_id = holder
        await session.agents.restore(agent_id)
        # Started again unless its session runs (then the record is returned unchanged).
        await session.agents.ensure_session(agent_id)
    agent, _ = await session.snapshot(agent_id)
    await session.push(
        "status", out.AgentResumed(agentId=agent.id, requestId=msg.requestId, agent=agent)
    )


async def list_commands(session: ClientSession, msg: req.ListCommands) -> None:
    """``agent.commands``: what the agent's running program reported. A draft (no agent yet)
    has no program to ask, so it lists none rather than a guess."""
    try:
        found = await session.call("agent.commands", {"agentId": msg.agentId})
    except RpcFailure as exc:
        if exc.code != "not_found":
            raise
        error = None if msg.draftConfig is not None else exc.message
        reply = out.Commands(agentId=msg.agentId, commands=[], error=error, requestId=msg.requestId)
    else:
        commands = [out.SlashCommand.model_validate(c) for c in found.get("commands") or []]
        error = (
            None
            if found.get("live")
            else "the agent has no running session: its commands are known once it runs"
        )
        reply = out.Commands(
            agentId=msg.agentId, commands=commands, error=error, requestId=msg.requestId
        )
    await session.push("list_commands_response", reply)


async def send_message(session: ClientSession, msg: req.SendMessage) -> None:
    try:
        result = await session.agents.send(msg.agentId, msg.text, message_id=msg.messageId or None)
    except Failure as exc:
        await session.push(
            "send_agent_message_response",
            out.SendMessage(
                requestId=msg.requestId, agentId=msg.agentId, accepted=False, error=exc.message
            ),
        )
        return
    await session.push(
        "send_agent_message_response",
        out.SendMessage(
            requestId=msg.requestId,
            agentId=result.agent.id,
            accepted=result.accepted,
            error=None,
        ),
    )


async def wait_for_finish(session: ClientSession, msg: req.WaitForFinish) -> None:
    deadline = None if msg.timeoutMs is None else time.monotonic() + msg.timeoutMs / 1000
    result: WaitResult
    while True:
        chunk = (
            WAIT_CHUNK
            if deadline is None
            else max(0.0, min(WAIT_CHUNK, deadline - time.monotonic()))
        )
        result = await session.agents.wait(msg.agentId, timeout=chunk)
        if result.outcome != "timeout" or (deadline is not None and time.monotonic() >= deadline):
            break
    agent: AgentSnapshot | None
    try:
        agent, _ = await session.snapshot(result.agent.id)
    except Failure:
        agent = None
    status = {"idle": "idle", "permission": "permission", "error": "error", "timeout": "timeout"}
    await session.push(
        "wait_for_finish_response",
        out.WaitForFinish(
            requestId=msg.requestId,
            # A closed agent has finished for good: the client reads it as done.
            status=status.get(result.outcome, "idle"),
            final=agent,
            error=result.agent.lastError if result.outcome == "error" else None,
            lastMessage=result.last_reply,
        ),
    )


async def cancel_agent(session: ClientSession, msg: req.OptionalRequestAgentRef) -> None:
    await session.agents.interrupt(msg.agentId)
    if msg.requestId is None:
        return
    agent, _ = await session.snapshot(msg.agentId)
    await session.push(
        "cancel_agent_response",
        out.CancelAgent(requestId=msg.requestId, agentId=agent.id, agent=agent),
    )


async def delete_agent(session: ClientSession, msg: req.AgentRef) -> None:
    agent_id = (await session.agents.get(msg.agentId)).id
    await session.agents.delete(agent_id)
    await session.push("agent_deleted", out.AgentDeleted(agentId=agent_id, requestId=msg.requestId))


async def archive_agent(session: ClientSession, msg: req.AgentRef) -> None:
    record = await session.agents.archive(msg.agentId, force=True)
    await session.push(
        "agent_archived",
        out.AgentArchived(
            agentId=record.id,
            archivedAt=record.archivedAt or "",
            requestId=msg.requestId,
        ),
    )


async def refresh_agent(session: ClientSession, msg: req.AgentRef) -> None:
    # agent.reload restarts a running program too (the port's ensure_session would not).
    result = await session.call("agent.reload", {"agentId": msg.agentId})
    agent_id = str(result["agent"]["id"])
    index = session.indexes.get(agent_id)
    await session.push(
        "status",
        out.AgentRefreshed(
            agentId=agent_id,
            requestId=msg.requestId,
            timelineSize=index.count if index is not None else None,
        ),
    )


async def _action(
    session: ClientSession,
    type_: str,
    ids: tuple[str, str],
    act: Callable[[], Awaitable[object]],
) -> None:
    request_id, agent_id = ids
    try:
        await act()
    except Failure as exc:
        reply = out.AgentAction(
            requestId=request_id, agentId=agent_id, accepted=False, error=exc.message
        )
    else:
        reply = out.AgentAction(requestId=request_id, agentId=agent_id, accepted=True, error=None)
    await session.push(type_, reply)


async def update_agent(session: ClientSession, msg: req.UpdateAgent) -> None:
    labels: dict[str, str | None] | None = dict(msg.labels) if msg.labels is not None else None
    await _action(
        session,
        "update_agent_response",
        (msg.requestId, msg.agentId),
        lambda: session.agents.update(msg.agentId, title=msg.name, labels=labels),
    )


async def set_mode(session: ClientSession, msg: req.SetMode) -> None:
    await _action(
        session,
        "set_agent_mode_response",
        (msg.requestId, msg.agentId),
        lambda: session.agents.set_mode(msg.agentId, msg.modeId),
    )


async def set_model(session: ClientSession, msg: req.SetModel) -> None:
    async def act() -> object:
        if not msg.modelId:
            raise InvalidParams("setting the model needs a model id (modelId)")
        return await session.agents.set_model(msg.agentId, msg.modelId)

    await _action(session, "set_agent_model_response", (msg.requestId, msg.agentId), act)


async def set_thinking(session: ClientSession, msg: req.SetThinking) -> None:
    await _action(
        session,
        "set_agent_thinking_response",
        (msg.requestId, msg.agentId),
        lambda: session.call(
            "agent.thinking.set",
            {"agentId": msg.agentId, "thinkingOptionId": msg.thinkingOptionId},
        ),
    )


async def set_feature(session: ClientSession, msg: req.SetFeature) -> None:
    await _action(
        session,
        "set_agent_feature_response",
        (msg.requestId, msg.agentId),
        lambda: session.call(
            "agent.feature.set",
            {"agentId": msg.agentId, "featureId": msg.featureId, "value": msg.value},
        ),
    )


async def answer_permission(session: ClientSession, msg: req.PermissionAnswer) -> None:
    response = msg.response
    allow = response.behavior == "allow"
    answer = PermissionAnswer(
        behavior=response.behavior,
        updated_input=response.updatedInput if allow else None,
        message=response.message if not allow else None,
        interrupt=bool(response.interrupt) if not allow else False,
    )
    # Fire and forget on the client; the resolution arrives as agent_permission_resolved.
    await session.agents.answer_permission(msg.agentId, msg.requestId, answer)


async def clear_attention(session: ClientSession, msg: req.ClearAttention) -> None:
    ids = [msg.agentId] if isinstance(msg.agentId, str) else list(msg.agentId)
    await asyncio.gather(*(session.call("agent.attention.clear", {"agentId": i}) for i in ids))
    if msg.requestId is None:
        return
    agents = [(await session.snapshot(i))[0] for i in ids]
    await session.push(
        "clear_agent_attention_response",
        out.ClearAttention(requestId=msg.requestId, agentId=msg.agentId, agents=agents),
    )
