"""How the ``codex`` provider maps Codex's items onto Paseo events, with the real pinned Codex.

Each test runs a few real turns against the fake model and checks the translated events:
messages and reasoning, shell and file-change tool calls with their details and approvals, model
errors, session settings reaching Codex, derived providers, start-up failures and a process that
dies mid-turn. The provider-independent scenarios are in ``test_provider_conformance_codex.py``.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from e2e.codex.harness import (
    Recorder,
    assert_no_process,
    config,
    make_provider,
    prompt_and_wait,
    run,
)
from helpers.agents_env import agent_binary, codex_env
from paseo_codex.provider import CodexProvider
from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.events import AgentEvent, AllowResolution, DenyResolution

from paseo.testing.fake_model import FakeModelServer, RefusingProxy
from paseo.testing.provider_conformance import agent_process_ids, kernel_launcher

LAUNCHER = kernel_launcher()

pytestmark = pytest.mark.e2e


def is_item(kind: str) -> Callable[[AgentEvent], bool]:
    """Matches timeline events carrying an item of ``kind``."""
    return lambda e: e.type == "timeline" and e.item.type == kind


def asked(event: AgentEvent) -> bool:
    return event.type == "permission_requested"


def test_messages_reasoning_and_usage(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    async def scenario() -> None:
        provider = make_provider(fake, tmp_path, proxy.proxy_env())
        recorder = Recorder()
        session = await provider.create_session(config(workdir), recorder, LAUNCHER)
        try:
            prompt = "[[think:weighing options]] [[long:5]] [[reply:first second third]]"
            end = await prompt_and_wait(session, recorder, prompt, "client-msg-1")
        finally:
            await session.close()
        assert recorder.problems == []
        kinds = [e.type for e in recorder.events]
        assert kinds[:2] == ["thread_started", "turn_started"]
        assert kinds[-1] == "turn_completed"

        (user,) = recorder.items("user_message")
        assert (user.text, user.messageId) == (prompt, "client-msg-1")
        reasoning = recorder.items("reasoning")
        assert "".join(r.text for r in reasoning) == "weighing options"
        chunks = recorder.items("assistant_message")
        assert len(chunks) > 1, "the answer streams in several chunks"
        assert len({c.messageId for c in chunks}) == 1
        assert recorder.text() == "first second third"

        usage = end.usage
        assert usage.inputTokens > 0
        assert usage.outputTokens > 0
        assert usage.contextWindow > 0

    run(scenario())


def test_shell_and_file_change_tool_calls(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    async def scenario() -> None:
        provider = make_provider(fake, tmp_path, proxy.proxy_env())
        recorder = Recorder()
        session = await provider.create_session(
            config(workdir, modeId="untrusted"), recorder, LAUNCHER
        )
        try:
            # A shell command, approved: running → failed (exit 3) with its output and code.
            since = recorder.mark()
            await session.prompt("[[shell:printf out; exit 3]]", message_id="m1")
            request = (await recorder.first(asked, since)).request
            assert (request.kind, request.toolName) == ("tool", "shell")
            assert request.title == "Run printf out; exit 3"
            await session.respond_permission(request.id, AllowResolution())
            assert (await recorder.turn_end(since)).type == "turn_completed"
            calls = recorder.items("tool_call", since)
            assert [c.status for c in calls] == ["running", "failed"]
            assert len({c.callId for c in calls}) == 1
            finished = calls[-1].detail
            assert (finished.type, finished.command) == ("shell", "printf out; exit 3")
            assert (finished.output, finished.exitCode) == ("out", 3)
            assert finished.cwd == str(workdir)

            # A file write, declined: the call fails as declined and nothing is written.
            since = recorder.mark()
            await session.prompt("[[write:notes.txt:line one\\nline two]]", message_id="m2")
            request = (await recorder.first(asked, since)).request
            target = str(workdir / "notes.txt")
            assert request.title == f"Write {target}"
            assert (request.detail.type, request.detail.path) == ("write", target)
            assert request.detail.content == "line one\nline two\n"
            await session.respond_permission(request.id, DenyResolution(message="not now"))
            assert (await recorder.turn_end(since)).type == "turn_completed"
            calls = recorder.items("tool_call", since)
            assert [(c.name, c.status) for c in calls] == [
                ("apply_patch", "running"),
                ("apply_patch", "failed"),
            ]
            assert calls[-1].error == "declined by the user"
            assert not (workdir / "notes.txt").exists()

            # Deny and interrupt: Codex cancels the turn, the call does not stay running.
            since = recorder.mark()
            await session.prompt("[[shell:touch never.txt]]", message_id="m3")
            request = (await recorder.first(asked, since)).request
            await session.respond_permission(request.id, DenyResolution(interrupt=True))
            assert (await recorder.turn_end(since)).type == "turn_canceled"
            assert not (workdir / "never.txt").exists()
            assert recorder.items("tool_call", since)[-1].status != "running"
        finally:
            await session.close()
        assert recorder.problems == []

    run(scenario())


def test_model_errors_fail_the_turn_and_the_session_carries_on(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    async def scenario() -> None:
        provider = make_provider(fake, tmp_path, proxy.proxy_env())
        recorder = Recorder()
        session = await provider.create_session(config(workdir), recorder, LAUNCHER)
        try:
            # Codex passes a 400's error body through as JSON: the provider unwraps the message.
            rejected = "[[error:400:The model `gpt-nope` does not exist]]"
            end = await prompt_and_wait(session, recorder, rejected, "m1")
            assert end.type == "turn_failed"
            assert end.error == "The model `gpt-nope` does not exist"

            end = await prompt_and_wait(session, recorder, "[[error:401:bad key]]", "m2")
            assert end.type == "turn_failed"
            assert "401" in end.error
            assert "bad key" in end.error

            end = await prompt_and_wait(session, recorder, "fine now?", "m3")
            assert end.type == "turn_completed"
        finally:
            await session.close()
        assert recorder.problems == []

    run(scenario())


def test_session_settings_reach_codex(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    async def scenario() -> None:
        provider = make_provider(fake, tmp_path, proxy.proxy_env())
        models = await provider.list_models(LAUNCHER)
        assert models
        assert any(m.default for m in models)
        assert all(m.thinkingOptions for m in models)
        modes = {m.id for m in await provider.list_modes(LAUNCHER)}
        assert modes >= {"auto", "full-access", "read-only"}

        recorder = Recorder()
        settings = config(
            workdir,
            systemPrompt="Always answer like a pirate.",
            mcpServers={"broken": {"command": "/nonexistent/mcp-server"}},
        )
        session = await provider.create_session(settings, recorder, LAUNCHER)
        try:
            await prompt_and_wait(session, recorder, "hi", "m1")
            assert "Always answer like a pirate." in json.dumps(fake.requests[-1].json)
            error = await recorder.first(is_item("error"), what="the MCP start-up error")
            assert "broken" in error.item.message

            await session.set_model("gpt-5.4-mini")
            await session.set_thinking("high")
            await session.set_mode("read-only")
            with pytest.raises(InvalidParams):
                await session.set_mode("yolo")
            seen = len(fake.requests)
            await prompt_and_wait(session, recorder, "[[shell:touch blocked.txt]]", "m2")
            requests = [r.json for r in fake.requests[seen:] if r.api == "responses"]
            assert requests
            assert {r["model"] for r in requests} == {"gpt-5.4-mini"}
            assert {r["reasoning"]["effort"] for r in requests} == {"high"}
            # Read-only sandbox: the command ran but could not write.
            assert not (workdir / "blocked.txt").exists()
            info = session.runtime_info()
            assert (info["model"], info["thinkingOptionId"], info["modeId"]) == (
                "gpt-5.4-mini",
                "high",
                "read-only",
            )
        finally:
            await session.close()
        assert recorder.problems == []

    run(scenario())


def test_derived_provider_reports_its_own_id(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    async def scenario() -> None:
        env = codex_env(fake.url, tmp_path, proxy_env=proxy.proxy_env())
        derived = CodexProvider().derive(
            "my-codex",
            "My Codex",
            {
                "command": [str(agent_binary("codex"))],
                "env": env,
                "models": ["gpt-5.5"],
                "additionalModels": [{"id": "gpt-local", "label": "Local"}],
            },
        )
        assert (derived.id, derived.label) == ("my-codex", "My Codex")
        assert [m.id for m in await derived.list_models(LAUNCHER)] == ["gpt-5.5", "gpt-local"]
        recorder = Recorder("my-codex")
        session = await derived.create_session(config(workdir), recorder, LAUNCHER)
        try:
            await prompt_and_wait(session, recorder, "hello", "m1")
            handle = session.persistence_handle()
        finally:
            await session.close()
        # The recorder checks every event names "my-codex".
        assert recorder.problems == []
        assert handle is not None
        assert handle.provider == "my-codex"

    run(scenario())


def test_start_up_failures_are_unavailable(tmp_path: Path, workdir: Path) -> None:
    async def scenario() -> None:
        missing = CodexProvider(command=[str(tmp_path / "no-such-codex")])
        availability = await missing.availability()
        assert availability.status == "unavailable"
        assert "npm install -g @openai/codex" in (availability.reason or "")
        with pytest.raises(Unavailable, match="not found"):
            await missing.create_session(config(workdir), Recorder(), LAUNCHER)

        # A program that dies at once: the error carries its exit code and stderr.
        crashing = CodexProvider(command=["sh", "-c", "echo codex-broke >&2; exit 3", "sh"])
        with pytest.raises(Unavailable) as crashed:
            await crashing.create_session(config(workdir, "crash"), Recorder(), LAUNCHER)
        assert "exit code 3" in crashed.value.message
        assert "codex-broke" in crashed.value.message

        # A program that never answers: bounded, and its whole group is reaped.
        hanging = CodexProvider(command=["sh", "-c", "sleep 300 & wait", "sh"], start_timeout=2.0)
        with pytest.raises(Unavailable, match="did not answer"):
            await hanging.create_session(config(workdir, "hang"), Recorder(), LAUNCHER)
        await assert_no_process("hang")

        with pytest.raises(InvalidParams):
            await crashing.create_session(config(tmp_path / "missing-dir"), Recorder(), LAUNCHER)

    run(scenario())


def test_process_death_fails_the_running_turn(
    fake: FakeModelServer, tmp_path: Path, workdir: Path
) -> None:
    async def scenario() -> None:
        provider = make_provider(fake, tmp_path)
        recorder = Recorder()
        session = await provider.create_session(config(workdir, "doomed"), recorder, LAUNCHER)
        try:
            since = recorder.mark()
            await session.prompt("[[slow:100]]", message_id="m1")
            await recorder.first(is_item("assistant_message"), since)
            for pid in agent_process_ids("doomed"):
                os.kill(pid, signal.SIGKILL)
            end = await recorder.turn_end(since)
            assert end.type == "turn_failed"
            assert end.code == "process_exited"
            assert "exited unexpectedly" in end.error
            with pytest.raises(Unavailable):
                await session.prompt("again", message_id="m2")
        finally:
            await session.close()
        await assert_no_process("doomed")
        assert recorder.problems == []

    run(scenario())
