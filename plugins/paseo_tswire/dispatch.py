"""Inbound session message ``type`` → (request model, handler).

:func:`handle` validates one message and runs its handler. A type not in :data:`TABLE` is
answered ``rpc_error`` with ``unknown_schema`` (never silence), a known one that does not
validate with ``invalid_message``, a daemon error with ``handler_error`` (its message is the
daemon's own, e.g. "no agent matches 'x'").
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers import agents, loopchat, schedules, system, terminals, workspaces
from paseo_tswire.handlers import checkout as checkout_handlers
from paseo_tswire.handlers import files as file_handlers
from paseo_tswire.handlers import settings as settings_handlers
from paseo_tswire.handlers import timeline as timeline_handlers
from paseo_tswire.handlers import voice as voice_handlers
from paseo_tswire.handlers import workspace_extra as workspace_extra_handlers
from paseo_tswire.models import inbound as req
from paseo_tswire.models import loopchat as lc
from paseo_tswire.models import schedule as sc
from paseo_tswire.models import terminal as tm
from paseo_tswire.models import workspace as wm
from paseo_tswire.models.messages import RpcError
from paseo_tswire.port import Failure
from paseo_tswire.workspace_paths import resolve_cwd

log = logging.getLogger("paseo.tswire")

Handler = Callable[[ClientSession, Any], Awaitable[None]]

TABLE: dict[str, tuple[type[BaseModel], Handler]] = {
    "ping": (req.Ping, system.ping),
    "fetch_agents_request": (req.FetchAgents, agents.fetch_agents),
    "fetch_agent_request": (req.AgentRef, agents.fetch_agent),
    "fetch_agent_history_request": (req.FetchAgents, agents.fetch_history),
    "close_items_request": (req.CloseItems, agents.close_items),
    "fetch_workspaces_request": (wm.FetchRequest, workspaces.fetch_workspaces),
    "open_project_request": (wm.OpenRequest, workspaces.open_project),
    "archive_workspace_request": (wm.ArchiveRequest, workspaces.archive_workspace),
    "create_agent_request": (req.CreateAgent, agents.create_agent),
    "import_agent_request": (req.ImportAgent, agents.import_agent),
    "resume_agent_request": (req.ResumeAgent, agents.resume_agent),
    "list_commands_request": (req.ListCommands, agents.list_commands),
    "send_agent_message_request": (req.SendMessage, agents.send_message),
    "wait_for_finish_request": (req.WaitForFinish, agents.wait_for_finish),
    "cancel_agent_request": (req.OptionalRequestAgentRef, agents.cancel_agent),
    "delete_agent_request": (req.AgentRef, agents.delete_agent),
    "archive_agent_request": (req.AgentRef, agents.archive_agent),
    "refresh_agent_request": (req.AgentRef, agents.refresh_agent),
    "update_agent_request": (req.UpdateAgent, agents.update_agent),
    "set_agent_mode_request": (req.SetMode, agents.set_mode),
    "set_agent_model_request": (req.SetModel, agents.set_model),
    "set_agent_thinking_request": (req.SetThinking, agents.set_thinking),
    "set_agent_feature_request": (req.SetFeature, agents.set_feature),
    "agent_permission_response": (req.PermissionAnswer, agents.answer_permission),
    "clear_agent_attention": (req.ClearAttention, agents.clear_attention),
    "fetch_agent_timeline_request": (req.FetchTimeline, timeline_handlers.fetch_timeline),
    "get_providers_snapshot_request": (req.Providers, system.providers_snapshot),
    "refresh_providers_snapshot_request": (req.Providers, system.refresh_providers),
    "list_provider_models_request": (req.ProviderRef, system.provider_models),
    "list_provider_modes_request": (req.ProviderRef, system.provider_modes),
    "list_provider_features_request": (req.ListProviderFeatures, system.provider_features),
    "paseo_worktree_list_request": (req.WorktreeList, system.worktree_list),
    "paseo_worktree_archive_request": (req.WorktreeArchive, system.worktree_archive),
    "shutdown_server_request": (req.Request, system.shutdown),
    "list_available_providers_request": (req.Request, system.available_providers),
    "client_heartbeat": (req.Heartbeat, system.heartbeat),
    "register_push_token": (req.PushToken, system.register_push_token),
    "list_terminals_request": (tm.ListRequest, terminals.list_terminals),
    "subscribe_terminals_request": (tm.CwdRef, terminals.subscribe_terminals),
    "unsubscribe_terminals_request": (tm.CwdRef, terminals.unsubscribe_terminals),
    "create_terminal_request": (tm.CreateRequest, terminals.create_terminal),
    "subscribe_terminal_request": (tm.TerminalRef, terminals.subscribe_terminal),
    "unsubscribe_terminal_request": (tm.TerminalOnly, terminals.unsubscribe_terminal),
    "terminal_input": (tm.InputRequest, terminals.terminal_input),
    "kill_terminal_request": (tm.TerminalRef, terminals.kill_terminal),
    "capture_terminal_request": (tm.CaptureRequest, terminals.capture_terminal),
    "schedule/create": (sc.CreateRequest, schedules.create),
    "schedule/list": (sc.ListRequest, schedules.list_schedules),
    "schedule/inspect": (sc.ScheduleRef, schedules.inspect),
    "schedule/logs": (sc.ScheduleRef, schedules.logs),
    "schedule/pause": (sc.ScheduleRef, schedules.pause),
    "schedule/resume": (sc.ScheduleRef, schedules.resume),
    "schedule/delete": (sc.ScheduleRef, schedules.delete),
    "chat/create": (lc.ChatCreate, loopchat.chat_create),
    "chat/list": (lc.ChatList, loopchat.chat_list),
    "chat/inspect": (lc.ChatRoomRef, loopchat.chat_inspect),
    "chat/delete": (lc.ChatRoomRef, loopchat.chat_delete),
    "chat/post": (lc.ChatPost, loopchat.chat_post),
    "chat/read": (lc.ChatRead, loopchat.chat_read),
    "chat/wait": (lc.ChatWait, loopchat.chat_wait),
    "loop/run": (lc.LoopRun, loopchat.loop_run),
    "loop/list": (lc.LoopList, loopchat.loop_list),
    "loop/inspect": (lc.LoopRef, loopchat.loop_inspect),
    "loop/logs": (lc.LoopLogs, loopchat.loop_logs),
    "loop/stop": (lc.LoopRef, loopchat.loop_stop),
    **checkout_handlers.TABLE,
    **file_handlers.TABLE,
    **workspace_extra_handlers.TABLE,
}

TABLE.update(settings_handlers.ROUTES)
TABLE.update(voice_handlers.ROUTES)

IGNORED: frozenset[str] = frozenset()
"""Notifications without a reply whose effect this daemon does not have (nothing to answer)."""


def _request_id(body: dict[str, Any]) -> str | None:
    value = body.get("requestId")
    return value if isinstance(value, str) else None


async def reply_error(session: ClientSession, body: dict[str, Any], error: str, code: str) -> None:
    request_id = _request_id(body)
    if request_id is None:
        log.debug("tswire: %s without a requestId: %s", body.get("type"), error)
        return
    await session.push(
        "rpc_error",
        RpcError(requestId=request_id, requestType=str(body.get("type")), error=error, code=code),
    )


async def handle(session: ClientSession, body: dict[str, Any]) -> None:
    """Validate and run one inbound session message (see the module docstring)."""
    type_ = str(body.get("type"))
    entry = TABLE.get(type_)
    if entry is None:
        if type_ not in IGNORED:
            await reply_error(session, body, "Unknown request schema", "unknown_schema")
        return
    model, handler = entry
    body = await resolve_cwd(session, body)
    try:
        message = model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        await reply_error(
            session, body, f"Invalid message: {where}: {first['msg']}", "invalid_message"
        )
        return
    try:
        await handler(session, message)
    except Failure as exc:
        await reply_error(session, body, exc.message, "handler_error")
    except Exception:
        log.exception("tswire: %s failed", type_)
        await reply_error(session, body, "internal error (see the daemon log)", "handler_error")
