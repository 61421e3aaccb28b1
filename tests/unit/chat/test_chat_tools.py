"""The chat tools' descriptors and least-privilege rules, over a real chat service (real files
in a temporary home) and a scope standing in for the MCP server's caller rules."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from paseo_chat.mentions import MentionDispatcher
from paseo_chat.runtime import Runtime
from paseo_chat.service import ChatService
from paseo_chat.store import ChatStore
from paseo_chat.tools import WAIT_LIMIT_MS, tools
from paseo_hookspecs.errors import AccessDenied, NotFound, PaseoError
from paseo_hookspecs.interfaces.agent import ModeAccess
from paseo_hookspecs.mcp_tools import McpTool, McpToolCaller
from pydantic import ValidationError

ME = "aaaaaaaa-0000-4000-8000-000000000001"
CHILD = "bbbbbbbb-0000-4000-8000-000000000002"
STRANGER = "cccccccc-0000-4000-8000-000000000003"


class Scope:
    """The caller ``ME``, who reaches itself and ``CHILD``."""

    def __init__(self, agent_id: str = ME) -> None:
        self.caller = McpToolCaller(agent_id=agent_id, provider="p", cwd="/w", workspace_id=None)

    async def reaches(self, agent_id: str | None) -> bool:
        return agent_id in (self.caller.agent_id, CHILD)

    async def child_mode(self, provider: str) -> str | None:
        return None

    async def access(self) -> ModeAccess | None:
        return "ask"

    def child_labels(self) -> Mapping[str, str]:
        return {}


class Agents:
    """The agents a mention can name; prompts are recorded, not run."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def get(self, reference: str) -> Any:
        if reference not in (ME, CHILD, STRANGER):
            raise NotFound(f"no agent {reference}")
        return SimpleNamespace(
            id=reference, title=None, archivedAt=None, deletedAt=None, lastStatus="idle"
        )

    async def send(self, agent_id: str, text: str, message_id: str | None = None) -> Any:
        self.sent.append(agent_id)
        return SimpleNamespace(accepted=True)


def _setup(tmp_path: Path) -> tuple[ChatService, dict[str, McpTool], Agents]:
    agents = Agents()
    service = ChatService(ChatStore(tmp_path), MentionDispatcher(cast(Any, agents)))
    runtime = Runtime()
    runtime.service = service
    return service, {tool.name: tool for tool in tools(runtime)}, agents


async def _call(tool: McpTool, arguments: dict[str, Any], scope: Scope | None = None) -> Any:
    return await tool.handler(scope or Scope(), tool.input.model_validate(arguments))


def test_the_tools_and_their_inputs() -> None:
    runtime = Runtime()
    named = {tool.name: tool for tool in tools(runtime)}
    assert set(named) == {
        "chat_create",
        "chat_list",
        "chat_inspect",
        "chat_post",
        "chat_read",
        "chat_wait",
    }
    # The wire's argument names; no author argument: the author is the caller.
    post = named["chat_post"].input.model_json_schema()["properties"]
    assert set(post) == {"room", "body", "replyToMessageId"}
    with pytest.raises(ValidationError):
        named["chat_post"].input.model_validate({"room": "r", "body": "b", "authorAgentId": "x"})
    with pytest.raises(ValidationError):
        named["chat_wait"].input.model_validate({"room": "r", "timeoutMs": WAIT_LIMIT_MS + 1})


def test_an_agent_uses_only_the_rooms_it_is_in(tmp_path: Path) -> None:
    async def scenario() -> None:
        service, named, _ = _setup(tmp_path)
        lobby = await service.create("lobby", None)
        private = await service.create("private", None)
        await service.post(lobby.id, f"welcome @{ME}", "manual")
        await service.post(private.id, "people only", "manual")
        listed = await _call(named["chat_list"], {})
        assert [room["name"] for room in listed["rooms"]] == ["lobby"]
        for tool, args in (
            ("chat_inspect", {}),
            ("chat_read", {}),
            ("chat_wait", {"timeoutMs": 0}),
            ("chat_post", {"body": "let me in"}),
        ):
            with pytest.raises(AccessDenied):
                await _call(named[tool], {"room": "private", **args})
        assert [m.body for m in service.read(private.id, limit=10)[0]] == ["people only"]
        posted = await _call(named["chat_post"], {"room": "lobby", "body": "hi"})
        assert posted["message"]["authorAgentId"] == ME
        read = await _call(named["chat_read"], {"room": "LOBBY"})
        assert [m["body"] for m in read["messages"]] == [f"welcome @{ME}", "hi"]
        waited = await _call(named["chat_wait"], {"room": "lobby", "timeoutMs": 0})
        assert waited == {"messages": [], "timedOut": True}
        with pytest.raises(PaseoError) as unknown:
            await _call(named["chat_read"], {"room": "nope"})
        assert unknown.value.code == "chat_room_not_found"

    asyncio.run(scenario())


def test_a_room_an_agent_creates_is_its_own(tmp_path: Path) -> None:
    async def scenario() -> None:
        _, named, _ = _setup(tmp_path)
        created = await _call(named["chat_create"], {"name": "mine", "purpose": "work"})
        assert created["room"]["createdByAgentId"] == ME
        assert [r["name"] for r in (await _call(named["chat_list"], {}))["rooms"]] == ["mine"]
        # Another agent is not in it until someone in it mentions it.
        with pytest.raises(AccessDenied):
            await _call(named["chat_read"], {"room": "mine"}, Scope(STRANGER))

    asyncio.run(scenario())


def test_a_post_mentions_only_members_and_agents_the_caller_reaches(tmp_path: Path) -> None:
    async def scenario() -> None:
        service, named, agents = _setup(tmp_path)
        await _call(named["chat_create"], {"name": "mine"})
        with pytest.raises(AccessDenied, match=STRANGER):
            await _call(named["chat_post"], {"room": "mine", "body": f"hey @{STRANGER}"})
        room = service.find("mine")
        assert service.read(room.id, limit=10)[0] == []
        assert agents.sent == []
        # Its own child: reached, so invited (and prompted).
        await _call(named["chat_post"], {"room": "mine", "body": f"help @{CHILD} @everyone"})
        assert agents.sent == [CHILD]
        assert service.is_member(room, CHILD)
        # A person's invitation makes the stranger a member: mentioning it is allowed then.
        await service.post(room.id, f"join @{STRANGER}", "manual")
        await _call(named["chat_post"], {"room": "mine", "body": f"hi @{STRANGER}"})

    asyncio.run(scenario())
