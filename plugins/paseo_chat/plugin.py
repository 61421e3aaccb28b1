"""Hook implementations of the chat rooms plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import (
    CliCommandGroup,
    CliRegistrar,
    LazyRpcMethodGroup,
    RpcMethodGroup,
    RpcMethodStub,
    RpcRegistrar,
)

from paseo_chat.runtime import Runtime

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Subscription
    from paseo_hookspecs.context import DaemonContext
    from paseo_hookspecs.mcp_tools import McpToolRegistrar

RUNTIME = Runtime()
_SUBSCRIPTIONS: list[Subscription] = []

STUBS = tuple(
    RpcMethodStub(f"chat.{verb}")
    for verb in ("create", "list", "inspect", "delete", "post", "read", "wait")
)
"""The ``chat`` group's methods (local and remote sessions), as :mod:`paseo_chat.rpc` builds
them: registered from these, its handlers and models imported by the first call."""


def _chat_group() -> RpcMethodGroup:
    from paseo_chat.rpc import method_group

    return method_group(RUNTIME)


@hookimpl
def paseo_register_rpc_methods(register: RpcRegistrar) -> None:
    """``chat.create | list | inspect | delete | post | read | wait``."""
    register(LazyRpcMethodGroup("chat", STUBS, _chat_group))


@hookimpl
def paseo_register_mcp_tools(register: McpToolRegistrar) -> None:
    """``chat_create | chat_list | chat_inspect | chat_post | chat_read | chat_wait``."""
    from paseo_chat.tools import tools

    for tool in tools(RUNTIME):
        register(tool)


@hookimpl
def paseo_register_cli_commands(register: CliRegistrar) -> None:
    """``paseo chat create | ls | inspect | delete | post | read | wait``."""
    from paseo_chat.cli import configure

    register(CliCommandGroup("chat", "Chat rooms for people and agents", configure))


@hookimpl
def paseo_startup(context: DaemonContext) -> None:
    """Load the rooms and follow agents' turns (a queued mention waits for the turn's end)."""
    from paseo_chat.mentions import MentionDispatcher
    from paseo_chat.service import ChatService
    from paseo_chat.store import ChatStore

    mentions = MentionDispatcher(context.agents)
    _SUBSCRIPTIONS.append(context.agents.subscribe(mentions, name="chat.mentions"))
    RUNTIME.service = ChatService(ChatStore(context.home), mentions)


@hookimpl
def paseo_shutdown(context: DaemonContext) -> None:
    while _SUBSCRIPTIONS:
        _SUBSCRIPTIONS.pop().close()
    RUNTIME.service = None
