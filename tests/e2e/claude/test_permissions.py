"""Permission answers as Claude Code sees them: deny messages, deny-and-interrupt, withdrawal."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.claude.harness import Claude, run
from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.events import (
    AllowResolution,
    DenyResolution,
    PermissionRequested,
    PermissionResolved,
    Timeline,
)

from paseo.testing.provider_conformance import assistant_text

pytestmark = pytest.mark.e2e


def test_deny_message_reaches_the_model(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start()
            events = await agent.turn(
                "[[write:secret.txt:x]]",
                permission=DenyResolution(message="paseo-denied: use a temp dir"),
            )
            assert events[-1].type == "turn_completed"
            resolved = [e for e in events if isinstance(e, PermissionResolved)]
            assert [r.resolution.behavior for r in resolved] == ["deny"]
            follow_ups = [r for r in claude.fake.model_requests() if r.tool_results]
            assert any("paseo-denied: use a temp dir" in t for t in follow_ups[-1].tool_results)
            assert "paseo-denied: use a temp dir" in assistant_text(events)
            tools = [
                e.item for e in events if isinstance(e, Timeline) and e.item.type == "tool_call"
            ]
            assert tools[-1].status == "failed"
            assert not (Path(agent.config.cwd) / "secret.txt").exists()
        finally:
            await claude.close_all()

    run(body())


def test_deny_and_interrupt_cancels_the_turn(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start()
            events = await agent.turn(
                "[[write:never.txt:x]]", permission=DenyResolution(message="stop", interrupt=True)
            )
            assert events[-1].type == "turn_canceled"
            assert not (Path(agent.config.cwd) / "never.txt").exists()
            # Exactly one result ended that turn: the next one runs to its own end. (Claude Code
            # sends the rejected tool result in the same user message as the new prompt, and the
            # fake answers that by quoting the tool result.)
            follow_up = await agent.turn("[[reply:still-here]]")
            assert follow_up[-1].type == "turn_completed"
            assert assistant_text(follow_up)
            assert b"[[reply:still-here]]" in claude.fake.model_requests()[-1].body
        finally:
            await claude.close_all()

    run(body())


def test_interrupt_withdraws_a_pending_permission(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start()
            start = await agent.start_turn("[[shell:touch pending.txt]]")
            requested = await agent.sink.wait_for(
                lambda e: isinstance(e, PermissionRequested),
                after=start,
                within=60,
                what="the permission request",
            )
            assert isinstance(requested, PermissionRequested)
            await agent.session.interrupt()
            events = await agent.wait_turn_end(start)
            assert events[-1].type == "turn_canceled"
            withdrawn = [e for e in events if isinstance(e, PermissionResolved)]
            assert [w.requestId for w in withdrawn] == [requested.request.id]
            with pytest.raises(NotFound):
                await agent.session.respond_permission(requested.request.id, AllowResolution())
            assert not (Path(agent.config.cwd) / "pending.txt").exists()
            follow_up = await agent.turn("[[reply:after]]")
            assert follow_up[-1].type == "turn_completed"
        finally:
            await claude.close_all()

    run(body())
