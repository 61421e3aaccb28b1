"""What each tool does: the caller rules applied, then the contract's ports driven.

Answers have the JSON shapes of the matching wire methods' results (``agent.get`` →
``{"agent": …}``, ``agent.wait`` → ``{"agentId", "outcome", "lastMessage", …}``), which is what
agents were shown before the tools drove the ports.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.agents import AgentCreate, PermissionAnswer, WaitResult
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.terminals import encode_keys
from pydantic import BaseModel

from paseo_mcp.caller import NOTIFY_LABEL, PARENT_LABEL, McpCaller
from paseo_mcp.daemon import Ports
from paseo_mcp.inputs import (
    WAIT_LIMIT,
    ActivityInput,
    AgentRef,
    CaptureTerminalInput,
    CreateAgentInput,
    CreateTerminalInput,
    ListAgentsInput,
    ListModelsInput,
    ListTerminalsInput,
    NoInput,
    PendingPermissionsInput,
    RespondPermissionInput,
    SendPromptInput,
    SendTerminalKeysInput,
    SetModeInput,
    TerminalRef,
    UpdateAgentInput,
    WaitInput,
)
from paseo_mcp.owners import Owners
from paseo_mcp.rules import CallerRules

TIMELINE_PAGE = 500
"""Entries read per page while the newest ones are looked for."""


@dataclass(frozen=True)
class Tooling:
    ports: Ports
    rules: CallerRules
    owners: Owners


def _json(model: BaseModel) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True)
    return data


def _agent(record: AgentRecord) -> dict[str, Any]:
    return {"agent": _json(record)}


def _waited(result: WaitResult) -> dict[str, Any]:
    return {
        "agentId": result.agent.id,
        "outcome": result.outcome,
        "status": result.agent.lastStatus,
        "lastMessage": result.last_reply,
        "error": result.agent.lastError,
        "pendingPermissions": [_json(request) for request in result.pending_permissions],
    }


async def _target(t: Tooling, caller: McpCaller, reference: str) -> str:
    return (await t.rules.target(caller, reference)).id


# --------------------------------------------------------------------------------- agents


async def create_agent(t: Tooling, caller: McpCaller, args: CreateAgentInput) -> Any:
    labels = {**args.labels, PARENT_LABEL: caller.agent_id}
    if args.notifyOnFinish:
        labels[NOTIFY_LABEL] = "true"
    mode = await t.rules.inherited_mode(caller, args.provider.split("/", 1)[0])
    spec = AgentCreate(
        provider=args.provider,
        model=args.model,
        modeId=mode,
        thinkingOptionId=args.thinking,
        # Agents get no cwd, mode or worktree inputs: a child works where its parent does.
        cwd=caller.cwd,
        labels=labels,
        title=args.title,
        initialPrompt=args.initialPrompt,
    )
    agents = t.ports.agents
    record = await agents.create(spec)
    if args.background or not args.initialPrompt:
        return _agent(record)
    waited = await agents.wait(record.id, timeout=WAIT_LIMIT)
    # The outcome first: what a model reads of a long result is its beginning.
    return {"agentId": record.id, "wait": _waited(waited), "agent": _json(record)}


async def wait_for_agent(t: Tooling, caller: McpCaller, args: WaitInput) -> Any:
    agent_id = await _target(t, caller, args.agentId)
    return _waited(await t.ports.agents.wait(agent_id, timeout=args.timeout))


async def send_prompt(t: Tooling, caller: McpCaller, args: SendPromptInput) -> Any:
    agent_id = await _target(t, caller, args.agentId)
    sent = await t.ports.agents.send(agent_id, args.prompt)
    return {"agentId": sent.agent.id, "messageId": sent.message_id, "accepted": sent.accepted}


async def agent_status(t: Tooling, caller: McpCaller, args: AgentRef) -> Any:
    record = await t.rules.target(caller, args.agentId)
    pending = await t.ports.agents.pending_permissions(record.id)
    return {**_agent(record), "pendingPermissions": [_json(request) for request in pending]}


async def list_agents(t: Tooling, caller: McpCaller, args: ListAgentsInput) -> Any:
    records = await t.rules.reachable(
        caller, include_archived=args.includeArchived, labels=args.labels
    )
    return {"agents": [_json(record) for record in records]}


async def activity(t: Tooling, caller: McpCaller, args: ActivityInput) -> Any:
    agent_id = await _target(t, caller, args.agentId)
    newest: deque[dict[str, Any]] = deque(maxlen=args.limit)
    after: int | None = None
    while True:
        page = await t.ports.agents.timeline(agent_id, after_seq=after, limit=TIMELINE_PAGE)
        newest.extend(_json(entry) for entry in page.entries)
        if not page.has_more or not page.entries:
            break
        after = page.entries[-1].seq
    return {"agentId": agent_id, "epoch": page.epoch, "entries": list(newest)}


async def cancel_agent(t: Tooling, caller: McpCaller, args: AgentRef) -> Any:
    return _agent(await t.ports.agents.interrupt(await _target(t, caller, args.agentId)))


async def archive_agent(t: Tooling, caller: McpCaller, args: AgentRef) -> Any:
    return _agent(await t.ports.agents.archive(await _target(t, caller, args.agentId)))


async def kill_agent(t: Tooling, caller: McpCaller, args: AgentRef) -> Any:
    return _agent(await t.ports.agents.stop(await _target(t, caller, args.agentId)))


async def update_agent(t: Tooling, caller: McpCaller, args: UpdateAgentInput) -> Any:
    agent_id = await _target(t, caller, args.agentId)
    updated = await t.ports.agents.update(agent_id, title=args.title, labels=args.labels)
    return _agent(updated)


async def set_mode(t: Tooling, caller: McpCaller, args: SetModeInput) -> Any:
    target = await t.rules.target(caller, args.agentId)
    # Not above the caller's own level: otherwise a plan agent could raise itself (or a
    # child it then drives) to a mode that never asks.
    await t.rules.check_mode(caller, target.provider, args.modeId)
    return _agent(await t.ports.agents.set_mode(target.id, args.modeId))


async def pending_permissions(t: Tooling, caller: McpCaller, args: PendingPermissionsInput) -> Any:
    if args.agentId is not None:
        records = [await t.rules.target(caller, args.agentId)]
    else:
        records = [await t.rules.target(caller, caller.agent_id)]
        records += await t.rules.reachable(caller, include_archived=False, labels={})
    requests: list[dict[str, Any]] = []
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            continue
        seen.add(record.id)
        for request in await t.ports.agents.pending_permissions(record.id):
            requests.append({"agentId": record.id, "request": _json(request)})
    return {"requests": requests}


async def respond_permission(t: Tooling, caller: McpCaller, args: RespondPermissionInput) -> Any:
    agent_id = await _target(t, caller, args.agentId)
    t.rules.answers_for(caller, agent_id)
    answer = PermissionAnswer(behavior=args.behavior, message=args.message)
    await t.ports.agents.answer_permission(agent_id, args.requestId, answer)
    return {"agentId": agent_id, "requestId": args.requestId, "behavior": args.behavior}


# ------------------------------------------------------------------------------ terminals
# An agent's terminals are its workspace's: it lists and opens terminals there, and reaches
# no terminal of another workspace.


async def list_terminals(t: Tooling, caller: McpCaller, args: ListTerminalsInput) -> Any:
    return t.ports.need_terminals().list(t.rules.workspace(caller))


async def create_terminal(t: Tooling, caller: McpCaller, args: CreateTerminalInput) -> Any:
    return await t.ports.need_terminals().create(
        t.rules.workspace(caller),
        profile_id=args.profileId,
        prompt=args.prompt,
        columns=args.columns,
        rows=args.rows,
    )


async def kill_terminal(t: Tooling, caller: McpCaller, args: TerminalRef) -> Any:
    terminal_id = t.rules.own_terminal(caller, args.terminalId)
    return await t.ports.need_terminals().kill(terminal_id)


async def capture_terminal(t: Tooling, caller: McpCaller, args: CaptureTerminalInput) -> Any:
    terminal_id = t.rules.own_terminal(caller, args.terminalId)
    return t.ports.need_terminals().capture(terminal_id, start=args.start, end=args.end)


async def send_terminal_keys(t: Tooling, caller: McpCaller, args: SendTerminalKeysInput) -> Any:
    terminal_id = t.rules.own_terminal(caller, args.terminalId)
    t.ports.need_terminals().input(terminal_id, encode_keys(args.keys, literal=args.literal))
    return {}


# ------------------------------------------------------------------------------ providers


async def list_providers(t: Tooling, caller: McpCaller, args: NoInput) -> Any:
    return {"providers": [_json(p) for p in t.ports.need_providers().providers()]}


async def list_models(t: Tooling, caller: McpCaller, args: ListModelsInput) -> Any:
    catalog = t.ports.need_providers()
    models = await catalog.models(args.provider)
    modes = await catalog.modes(args.provider)
    return {
        "providerId": args.provider,
        "models": [_json(model) for model in models],
        "modes": [_json(mode) for mode in modes],
    }
