"""Listing models and modes without a 15 s cliff, and the built-in ACP programs' availability.

- Listing uses one shared probe: a caller that gives up (the kernel bounds a listing at 15 s,
  slow ACP programs take 20-35 s to start) does not cancel it, concurrent callers share it,
  and once a real session has run, listing reads what that session reported (no probe).
- ``copilot``, ``omp`` and ``codex`` are never "ready" without credentials: each says what is
  missing. Their programs are found by name; the checks read the daemon's environment under
  the provider's ``env``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import acp_test_agent
from paseo_acp import AcpProvider
from paseo_acp.copilot import CopilotProvider
from paseo_acp.omp import OmpProvider
from paseo_codex.provider import CodexProvider
from paseo_hookspecs.interfaces.agent import SessionConfig
from paseo_hookspecs.process import AgentProcess

from paseo.testing.provider_conformance import RecordingSink, kernel_launcher

pytestmark = pytest.mark.e2e

CREDENTIALS = (
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_TYPE",
    "COPILOT_MODEL",
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "COPILOT_HOME",
    "PI_CODING_AGENT_DIR",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_HOME",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
)


class CountingLauncher:
    """The kernel's launcher, counting the programs it starts."""

    def __init__(self) -> None:
        self.inner = kernel_launcher()
        self.launched = 0

    async def launch(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        provider: str,
        agent_id: str | None = None,
        inherit_env: bool = True,
    ) -> AgentProcess:
        self.launched += 1
        return await self.inner.launch(
            argv, cwd=cwd, env=env, provider=provider, agent_id=agent_id, inherit_env=inherit_env
        )


def python_provider(tmp_path: Path) -> AcpProvider:
    provider = AcpProvider().derive(
        "acp-python",
        "ACP test agent",
        {
            "command": acp_test_agent.command(),
            "env": {acp_test_agent.STATE_DIR_VARIABLE: str(tmp_path / "state")},
        },
    )
    assert isinstance(provider, AcpProvider)
    return provider


def test_a_caller_giving_up_does_not_cancel_the_one_shared_probe(tmp_path: Path) -> None:
    provider = python_provider(tmp_path)
    launcher = CountingLauncher()

    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(provider.list_modes(launcher), 0.001)
        listed = await asyncio.gather(
            provider.list_modes(launcher),
            provider.list_models(launcher),
            provider.list_modes(launcher),
        )
        assert [m.id for m in listed[0]] == ["default", "plan"]
        assert [m.id for m in listed[1]] == ["test-fast", "test-smart"]
        assert listed[2] == listed[0]
        assert launcher.launched == 1, "every listing must share one probe"

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_a_live_session_answers_listing_without_a_probe(tmp_path: Path) -> None:
    provider = python_provider(tmp_path)
    launcher = CountingLauncher()
    cwd = tmp_path / "work"
    cwd.mkdir()

    async def scenario() -> None:
        config = SessionConfig(agentId="live-listing", cwd=str(cwd), modeId="plan")
        session = await provider.create_session(config, RecordingSink("acp-python"), launcher)
        try:
            # The live session's own report, which `agent.modes` answers with.
            live = session.modes()
            assert live is not None
            assert [m.id for m in live] == ["default", "plan"]
            assert [m.id for m in await provider.list_modes(launcher)] == ["default", "plan"]
            models = await provider.list_models(launcher)
            assert [(m.id, m.default) for m in models] == [
                ("test-fast", True),
                ("test-smart", False),
            ]
            assert launcher.launched == 1, "listing started a probe beside the live session"
        finally:
            await session.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))


@pytest.fixture
def bare_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No credentials in the environment, and an empty ``HOME``."""
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def availability(provider: Any) -> tuple[str, str]:
    result = asyncio.run(provider.availability())
    return result.status, result.reason or ""


def on_path(tmp_path: Path, *names: str) -> str:
    """A ``PATH`` holding programs called ``names`` (copies of ``true``)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in names:
        program = folder / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', os.defpath)}"


def test_copilot_availability_names_the_missing_byok_variables(
    bare_env: Path, tmp_path: Path
) -> None:
    path = on_path(tmp_path, "copilot")
    missing = CopilotProvider(overrides={"command": ["no-such-copilot", "--acp"]})
    status, reason = availability(missing)
    assert status == "unavailable"
    assert "npm install -g @github/copilot" in reason

    partial = CopilotProvider(
        overrides={"env": {"PATH": path, "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:1/v1"}}
    )
    status, reason = availability(partial)
    assert status == "unavailable"
    assert "copilot login" in reason
    assert "missing: COPILOT_PROVIDER_TYPE, COPILOT_MODEL" in reason

    byok = {
        "PATH": path,
        "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:1/v1",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_MODEL": "gpt-4.1",
    }
    assert availability(CopilotProvider(overrides={"env": byok})) == ("ready", "")
    token = CopilotProvider(overrides={"env": {"PATH": path, "GH_TOKEN": "ghp_test"}})
    assert availability(token) == ("ready", "")
    (bare_env / ".copilot").mkdir()
    (bare_env / ".copilot" / "config.json").write_text('{"last_logged_in_user": {"login": "me"}}')
    assert availability(CopilotProvider(overrides={"env": {"PATH": path}})) == ("ready", "")
    # A derived provider keeps Copilot's checks (and its model from the BYOK variables).
    derived = CopilotProvider().derive("my-copilot", "Mine", {"env": byok})
    assert isinstance(derived, CopilotProvider)
    assert [m.id for m in asyncio.run(derived.list_models(kernel_launcher()))] == ["gpt-4.1"]


def test_omp_availability_needs_bun_and_a_model(bare_env: Path, tmp_path: Path) -> None:
    without_bun = OmpProvider(overrides={"env": {"PATH": on_path(tmp_path, "omp")}})
    status, reason = availability(without_bun)
    assert (status, "bun" in reason) == ("unavailable", True)

    path = on_path(tmp_path, "omp", "bun")
    status, reason = availability(OmpProvider(overrides={"env": {"PATH": path}}))
    assert status == "unavailable"
    assert "no model configured" in reason
    assert str(bare_env / ".omp" / "agent") in reason

    agent_dir = bare_env / ".omp" / "agent"
    agent_dir.mkdir(parents=True)
    (agent_dir / "models.yml").write_text("providers: {}\n")
    assert availability(OmpProvider(overrides={"env": {"PATH": path}})) == ("ready", "")
    keyed = OmpProvider(overrides={"env": {"PATH": path, "PI_CODING_AGENT_DIR": str(tmp_path)}})
    assert availability(keyed)[0] == "unavailable"
    keyed = OmpProvider(
        overrides={
            "env": {"PATH": path, "PI_CODING_AGENT_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
        }
    )
    assert availability(keyed) == ("ready", "")


def test_codex_without_credentials_is_not_ready(bare_env: Path, tmp_path: Path) -> None:
    codex = [sys.executable]
    status, reason = availability(CodexProvider(command=codex))
    assert status == "unavailable"
    assert "codex login" in reason
    assert "OPENAI_API_KEY" in reason

    assert availability(CodexProvider(command=codex, env={"OPENAI_API_KEY": "sk"})) == ("ready", "")
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model_provider = "fake"\n')
    ready = CodexProvider(command=codex, env={"CODEX_HOME": str(home)})
    assert availability(ready) == ("ready", "")
    (home / "config.toml").write_text("model_provider = [\n")
    status, reason = availability(ready)
    assert (status, "config.toml cannot be read" in reason) == ("unavailable", True)
    (home / "config.toml").unlink()
    (home / "auth.json").write_text("{}")
    assert availability(ready) == ("ready", "")
